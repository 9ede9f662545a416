"""Other tools' formats: Parquet and the Hub folder for Hugging Face ``datasets``, VLMEvalKit TSVs, lmms-eval task
folders, inspect_ai task modules (`parquet`, `hf_dataset`, `vlmevalkit`, `lmms_eval`, `inspect_task`, all built from
`views`; scoring inside the tools: `tool_scoring`, `lmms_eval_utils`, `inspect_hooks`), and predictions imported
back from VLMEvalKit result files, lmms-eval sample logs and inspect_ai logs (`imports`). `medtemporal.export`
dispatches to the writers; nothing here imports it."""
