"""Interoperability with other evaluation tools: lmms-eval task folders, and predictions imported from
VLMEvalKit result files and lmms-eval sample logs (`medtemporal import-predictions`)."""
