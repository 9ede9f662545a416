"""Tiny stand-ins for the report metrics' published models, built from configs (nothing downloaded).

Each writes, under a folder, files laid out as the published ones (a CheXbert ``.pth`` with ``module.``-prefixed
keys, a ``transformers`` model folder) with a small random model of a fixed seed.
"""

from __future__ import annotations

from pathlib import Path

WORDS = ("the heart is normal size no pleural effusion pneumothorax stable new small left right lung lungs are "
         "clear moderate cardiomegaly edema improved worse unchanged opacity consolidation tube . , mild there "
         "atelectasis lobe lower upper of and with in a").split()
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *dict.fromkeys(WORDS)]


def tiny_bert_folder(folder: Path, *, hidden: int = 32, seed: int = 0, with_weights: bool = False,
                     layers: int = 2) -> Path:
    """A BERT ``config.json`` and ``vocab.txt`` (and random weights and its tokenizer when asked) of a small model."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    config = BertConfig(vocab_size=len(VOCAB), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=2,
                        intermediate_size=37, max_position_embeddings=512)
    config.save_pretrained(folder)
    if with_weights:
        torch.manual_seed(seed)
        BertModel(config).save_pretrained(folder)
        BertTokenizer(str(folder / "vocab.txt"), model_max_length=512).save_pretrained(folder)
    return folder


def tiny_chexbert(folder: Path, seed: int = 0) -> tuple[Path, Path]:
    """``(checkpoint, backbone folder)``: a CheXbert-shaped ``.pth`` (13 four-way heads and one two-way head on a
    tiny BERT), saved as the published one is (``{"model_state_dict": {"module.bert…", "module.linear_heads…"}}``)."""
    import torch
    from transformers import BertConfig, BertModel

    backbone = tiny_bert_folder(folder / "backbone")
    torch.manual_seed(seed)
    bert = BertModel(BertConfig.from_json_file(str(backbone / "config.json")))
    heads = torch.nn.ModuleList([torch.nn.Linear(32, 4) for _ in range(13)] + [torch.nn.Linear(32, 2)])
    _spread(heads, _cls_states(bert, backbone))
    state = {f"module.bert.{k}": v for k, v in bert.state_dict().items()}
    state |= {f"module.linear_heads.{k}": v for k, v in heads.state_dict().items()}
    checkpoint = folder / "chexbert.pth"
    torch.save({"model_state_dict": state, "epoch": 1}, checkpoint)
    return checkpoint, backbone


def _cls_states(bert, backbone: Path):  # noqa: ANN001, ANN202  (a BertModel; a tensor)
    """The [CLS] states of one-word reports: how the stand-in's [CLS] varies between inputs."""
    import torch
    from transformers import BertTokenizer

    tok = BertTokenizer(str(backbone / "vocab.txt"))
    with torch.no_grad():
        enc = tok(WORDS, padding=True, return_tensors="pt")
        return bert.eval()(**enc).last_hidden_state[:, 0]


def _spread(heads, states) -> None:  # noqa: ANN001
    """Aim each head at the directions in which [CLS] states differ (a random model's states barely do), so
    that the stand-in gives different labels to different reports."""
    import torch

    centre, scale = states.mean(0), states.std(0) + 1e-6
    with torch.no_grad():
        for head in heads:
            head.weight.copy_(torch.randn_like(head.weight) / scale)
            head.bias.copy_(-(head.weight @ centre))


RADGRAPH_LABELS = ("ANAT-DP", "OBS-DP", "OBS-DA", "OBS-U")
RADGRAPH_RELATIONS = ("modify", "located_at", "suggestive_of")


def tiny_radgraph(folder: Path, model_type: str = "radgraph-xl", seed: int = 0) -> Path:
    """A RadGraph model folder laid out as the unpacked ``radgraph-xl.tar.gz`` (``config.json``, ``vocabulary/``,
    ``weights.th``): a DyGIE model on a tiny BERT, its NER and relation layers random with a fixed seed."""
    import json

    import torch

    from medtemporal.scoring.clinical.radgraph import vendored_radgraph

    core = vendored_radgraph()
    bert = str(tiny_bert_folder(folder / "bert", with_weights=True))
    model_dir = folder / model_type
    vocab_dir = model_dir / "vocabulary"
    vocab_dir.mkdir(parents=True)
    (vocab_dir / "non_padded_namespaces.txt").write_text("*tags\n*labels\n", encoding="utf-8")
    (vocab_dir / f"{model_type}__ner_labels.txt").write_text("\n" + "\n".join(RADGRAPH_LABELS) + "\n", encoding="utf-8")
    (vocab_dir / f"{model_type}__relation_labels.txt").write_text("\n".join(RADGRAPH_RELATIONS) + "\n",
                                                                 encoding="utf-8")
    indexer = {"type": "pretrained_transformer_mismatched", "model_name": bert, "max_length": 512}
    config = {
        "dataset_reader": {"type": "dygie", "token_indexers": {"bert": indexer}, "max_span_width": 4},
        "model": {
            "type": "dygie", "embedder": {"token_embedders": {"bert": indexer}},
            "feature_size": 8, "max_span_width": 4, "target_task": "relation",
            "feedforward_params": {"num_layers": 1, "hidden_dims": 16, "dropout": 0.0},
            "loss_weights": {"ner": 1.0, "relation": 1.0, "coref": 0.0, "events": 0.0},
            "initializer": {}, "module_initializer": {},
            "modules": {"coref": {"spans_per_word": 0.3, "max_antecedents": 10}, "ner": {},
                        "relation": {"spans_per_word": 0.5},
                        "events": {"trigger_spans_per_word": 0.3, "argument_spans_per_word": 0.8,
                                   "loss_weights": {"trigger": 1.0, "arguments": 1.0}}},
        },
    }
    (model_dir / "config.json").write_text(json.dumps(config), encoding="utf-8")
    torch.manual_seed(seed)
    vocab = core.Vocabulary.from_files(str(vocab_dir))
    embedder = core.text_field_embedders.BasicTextFieldEmbedder(
        {"bert": core.token_embedders.PretrainedTransformerMismatchedEmbedder(model_name=bert, max_length=512)})
    params = {k: v for k, v in config["model"].items() if k not in ("type", "embedder", "initializer",
                                                                     "module_initializer")}
    model = core.dygie.DyGIE(vocab=vocab, embedder=embedder, **params)
    torch.save(model.state_dict(), model_dir / "weights.th")
    return model_dir


RATE_LABELS = ("O", *(f"{p}-{t}" for t in ("ABNORMALITY", "NON-ABNORMALITY", "DISEASE", "NON-DISEASE", "ANATOMY")
                      for p in ("B", "I")))


def tiny_ratescore(folder: Path, seed: int = 0) -> tuple[Path, Path]:
    """``(ner, encoder)`` folders shaped as RaTEScore's: a token classifier over RaTE's BIO labels and an encoder,
    both tiny BERTs (random, fixed seed) with their tokenizer."""
    import torch
    from transformers import BertConfig, BertForTokenClassification

    encoder = tiny_bert_folder(folder / "encoder", with_weights=True, seed=seed)
    ner = tiny_bert_folder(folder / "ner", with_weights=True, seed=seed)
    config = BertConfig.from_pretrained(ner, num_labels=len(RATE_LABELS),
                                        id2label=dict(enumerate(RATE_LABELS)),
                                        label2id={label: k for k, label in enumerate(RATE_LABELS)})
    torch.manual_seed(seed)
    model = BertForTokenClassification(config)
    with torch.no_grad():
        model.classifier.weight.normal_(std=2.0)
    model.save_pretrained(ner)
    return ner, encoder


def tiny_ct_classifier(folder: Path, labels: int = 18, seed: int = 0) -> Path:
    """A sequence classifier with ``labels`` outputs laid out as RadBERT-CT's folder (a tiny BERT, not RoBERTa:
    the metric loads it with the Auto classes, as it does the published one)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    tiny_bert_folder(folder, with_weights=True, seed=seed)
    config = BertConfig.from_pretrained(folder, num_labels=labels, problem_type="multi_label_classification")
    torch.manual_seed(seed)
    model = BertForSequenceClassification(config).eval()
    tok = BertTokenizer(str(folder / "vocab.txt"))
    with torch.no_grad():
        pooled = model.bert(**tok(WORDS, padding=True, return_tensors="pt")).pooler_output
    _spread([model.classifier], pooled)
    model.save_pretrained(folder)
    return folder
