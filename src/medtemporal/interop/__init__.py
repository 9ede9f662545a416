"""Other tools' formats: Parquet and the Hub folder for Hugging Face ``datasets``, VLMEvalKit TSVs, lmms-eval task
folders (`parquet`, `hf_dataset`, `vlmevalkit`, `lmms_eval`, all built from `views`), and predictions imported back from
VLMEvalKit result files and lmms-eval sample logs (`imports`). `medtemporal.export` dispatches to the writers;
nothing here imports it."""
