"""The registered models: the medical VLMs of the field, the general VLMs they build on, and API models.

Each fact cites its source (`ModelEntry.sources`); where no source states it, the field is None ("unknown").
``size`` is the parameter count the card or paper names. ``tested`` in ``medtemporal models`` comes from
`TESTED`: the architectures the test suite runs for real with tiny random-weight models built from a config
(``tests/backends/test_registry_models.py``), on one item of every registered family.
"""

from __future__ import annotations

from medtemporal.models import adapters  # noqa: F401  (registers the adapters' backends beside their entries)
from medtemporal.models.entry import ModelEntry
from medtemporal.registry import register

TESTED = {
    "gemma3": "tiny random-weight Gemma 3 through hf: on one item of every family",
    "qwen2_vl": "tiny random-weight Qwen2-VL through hf: on one item of every family",
    "qwen2_5_vl": "tiny random-weight Qwen2.5-VL through hf: on one item of every family",
    "qwen3_vl": "tiny random-weight Qwen3-VL through hf: on one item of every family",
    "llava": "tiny random-weight LLaVA through hf: on one item of every family",
    "internvl": "tiny random-weight InternVL through hf: on one item of every family",
    "maira2": "the adapter's side (prior image and report through format_and_preprocess_reporting_input) on a "
              "tiny LLaVA with a stand-in processor",
    "m3d": "volume mode on a tiny causal LM with a volume keyword (tests/backends/test_hf_volume.py)",
    "api": "the openai client against a loopback server (tests/backends/test_openai_http.py)",
}
"""Architecture → what the test suite runs for real (no weights are downloaded in tests)."""

HAI_DEF = "Health AI Developer Foundations terms of use (research and development; no clinical use)"
MEDGEMMA_CARD = "https://huggingface.co/google/medgemma-4b-it"
HAI_DEF_TERMS = "https://developers.google.com/health-ai-developer-foundations/terms"
MEDGEMMA_GENERATION = {"temperature": 0.0, "max_tokens": 200}
"""The MedGemma card's example: ``model.generate(**inputs, max_new_tokens=200, do_sample=False)``."""
BF16 = {"dtype": "bfloat16"}
QWEN_PIXELS = {"min_pixels": 256 * 28 * 28, "max_pixels": 1280 * 28 * 28}
"""The Qwen2-VL / Qwen2.5-VL cards' example resolution range: 256 to 1280 tokens of 28 × 28 pixels per image."""
LINGSHU = ("https://huggingface.co/lingshu-medical-mllm/Lingshu-7B", "https://arxiv.org/abs/2506.07044",
           "https://bio.rodeo/models/lingshu")

_ENTRIES = (
    ModelEntry("medgemma-4b", "google/medgemma-4b-it", "4B", "gemma3", "hf", HAI_DEF, True,
               (MEDGEMMA_CARD, HAI_DEF_TERMS), hf_options=BF16, vllm_options=BF16, generation=MEDGEMMA_GENERATION,
               notes="Gemma 3 architecture (transformers >= 4.50); each image is resized to 896 x 896 and encoded "
                     "to 256 tokens (card)."),
    ModelEntry("medgemma-27b", "google/medgemma-27b-it", "27B", "gemma3", "hf", HAI_DEF, True,
               ("https://huggingface.co/google/medgemma-27b-it", HAI_DEF_TERMS), hf_options=BF16,
               vllm_options=BF16, generation=MEDGEMMA_GENERATION,
               notes="The multimodal 27B; google/medgemma-27b-text-it is text only and cannot answer image items."),
    ModelEntry("medgemma-1.5-4b", "google/medgemma-1.5-4b-it", "4B", "gemma3", "hf", HAI_DEF, True,
               ("https://huggingface.co/google/medgemma-1.5-4b-it", HAI_DEF_TERMS), hf_options=BF16,
               vllm_options=BF16, generation=MEDGEMMA_GENERATION,
               notes="MedGemma 1.5 (January 2026), built on Gemma 3."),
    ModelEntry("lingshu-7b", "lingshu-medical-mllm/Lingshu-7B", "7B", "qwen2_5_vl", "hf", "MIT", False, LINGSHU,
               hf_options=BF16, vllm_options=BF16,
               notes="Qwen2.5-VL architecture; evaluated by its authors with MedEvalKit."),
    ModelEntry("lingshu-32b", "lingshu-medical-mllm/Lingshu-32B", "32B", "qwen2_5_vl", "hf", "MIT", False,
               ("https://huggingface.co/lingshu-medical-mllm/Lingshu-32B", *LINGSHU[1:]), hf_options=BF16,
               vllm_options=BF16, notes="Qwen2.5-VL architecture."),
    ModelEntry("huatuogpt-vision-7b", "FreedomIntelligence/HuatuoGPT-Vision-7B-Qwen2.5VL", "7B", "qwen2_5_vl", "hf",
               "unknown (see the card)", None,
               ("https://huggingface.co/FreedomIntelligence/HuatuoGPT-Vision-7B-Qwen2.5VL",
                "https://arxiv.org/abs/2406.19280"), hf_options=BF16, vllm_options=BF16,
               notes="The Qwen2.5-VL build of HuatuoGPT-Vision, which loads with transformers' own classes."),
    ModelEntry("llava-med-v1.5-7b", "chaoyinshe/llava-med-v1.5-mistral-7b-hf", "7B", "llava", "hf",
               "the Mistral-7B-Instruct-v0.2 licence; research use only (microsoft/llava-med-v1.5-mistral-7b card)",
               False, ("https://huggingface.co/microsoft/llava-med-v1.5-mistral-7b",
                       "https://huggingface.co/docs/transformers/model_doc/llava"),
               hf_options=BF16, vllm_options=BF16,
               notes="A community conversion of microsoft/llava-med-v1.5-mistral-7b (LLaVA code base format) to "
                     "transformers' LLaVA format; the hub id is not confirmed by a cited source. transformers' "
                     "LLaVA docs: not trained on several images in one prompt, so multi-image items are out of "
                     "its training distribution."),
    ModelEntry("medvlm-r1", "JZPeterPan/MedVLM-R1", "2B", "qwen2_vl", "hf", "Apache-2.0", False,
               ("https://huggingface.co/JZPeterPan/MedVLM-R1", "https://arxiv.org/abs/2502.19634"),
               hf_options=BF16, vllm_options=BF16, generation={"temperature": 0.0, "max_tokens": 1024},
               answer_format="think-answer",
               notes="Qwen2-VL-2B trained with GRPO on 600 MRI VQA samples; the card generates with "
                     "max_new_tokens=1024, do_sample=False."),
    ModelEntry("internvl3-8b", "OpenGVLab/InternVL3-8B-hf", "8B", "internvl", "hf",
               "unknown (see the card)", False, ("https://huggingface.co/OpenGVLab/InternVL3-8B-hf",
                                                 "https://huggingface.co/docs/transformers/model_doc/internvl"),
               hf_options=BF16, vllm_options=BF16,
               notes="The -hf repository holds the transformers-native format (InternVLForConditionalGeneration); "
                     "OpenGVLab/InternVL3-8B itself needs remote code."),
    ModelEntry("qwen2.5-vl-7b", "Qwen/Qwen2.5-VL-7B-Instruct", "7B", "qwen2_5_vl", "hf", "Apache-2.0", False,
               ("https://huggingface.co/Qwen/Qwen2.5-VL-7B-Instruct",
                "https://www.azion.com/pt-br/documentacao/produtos/ai/edge-ai/modelos/qwen-2-5-vl-7b"),
               hf_options={**BF16, "processor_kwargs": QWEN_PIXELS},
               vllm_options={**BF16, "mm_processor_kwargs": QWEN_PIXELS}),
    ModelEntry("qwen3-vl-8b", "Qwen/Qwen3-VL-8B-Instruct", "8B", "qwen3_vl", "hf", "unknown (see the card)", False,
               ("https://huggingface.co/Qwen/Qwen3-VL-8B-Instruct",), hf_options=BF16, vllm_options=BF16),
    ModelEntry("gemma-3-4b", "google/gemma-3-4b-it", "4B", "gemma3", "hf", "Gemma terms of use", True,
               ("https://huggingface.co/google/gemma-3-4b-it", "https://ai.google.dev/gemma/terms"),
               hf_options=BF16, vllm_options=BF16),
    ModelEntry("maira-2", "microsoft/maira-2", "7B", "maira2", "hf", "MSRLA (research use only)", True,
               ("https://huggingface.co/microsoft/maira-2", "https://arxiv.org/abs/2406.04449"),
               hf_options={"trust_remote_code": True}, generation={"temperature": 0.0, "max_tokens": 300},
               max_images=3, answer_format="report", adapter="maira2",
               notes="RAD-DINO-MAIRA-2 image encoder + vicuna-7b-v1.5 (card); reads the current frontal and lateral "
                     "images and the prior frontal image and prior report (its processor's "
                     "format_and_preprocess_reporting_input); remote code.",
               untested="the real remote processor's prompt layout and the weights' outputs"),
    ModelEntry("chexagent-2-3b", "StanfordAIMI/CheXagent-2-3b", "3B", "chexagent", "hf", "CC-BY-NC-4.0", None,
               ("https://huggingface.co/StanfordAIMI/CheXagent-2-3b/tree/main", "https://arxiv.org/abs/2401.12208"),
               hf_options={"trust_remote_code": True}, answer_format="plain",
               notes="Remote code (a Phi-based CheXagentForCausalLM with its own tokenizer); a chest X-ray model of "
                     "Stanford AIMI.",
               unsupported="its remote code takes images through its own tokenizer, not a transformers processor, "
                           "and no adapter for that interface is written; serve it behind an OpenAI-compatible "
                           "endpoint of your own and pass openai+http://HOST:PORT/v1:MODEL"),
    ModelEntry("m3d-lamed", "GoodBaiBai88/M3D-LaMed-Phi-3-4B", "4B", "m3d", "hf", "unknown (see the card)", None,
               ("https://huggingface.co/GoodBaiBai88/M3D-LaMed-Phi-3-4B", "https://arxiv.org/abs/2404.00578"),
               hf_options={"trust_remote_code": True, "volume_input": "images", "volume_token": "<im_patch>",
                           "volume_tokens": 256, "processor_kwargs": {"use_fast": False}},
               max_images=1, answer_format="volume",
               notes="Reads one CT volume (protocol ct, mode=volume); see medtemporal.backends.hf's volume mode."),
    ModelEntry("gpt-4o", None, None, "api", "openai", "OpenAI terms (commercial API)", None,
               ("https://platform.openai.com/docs/models",), api_uri="openai:gpt-4o",
               notes="Credentialed data (MIMIC) may not go to a commercial API without --allow-remote-data and a "
                     "data-use agreement that allows it."),
    ModelEntry("gpt-4.1", None, None, "api", "openai", "OpenAI terms (commercial API)", None,
               ("https://platform.openai.com/docs/models",), api_uri="openai:gpt-4.1"),
    ModelEntry("gemini-2.5-flash", None, None, "api", "openai+https", "Google terms (commercial API)", None,
               ("https://ai.google.dev/gemini-api/docs/openai",),
               api_uri="openai+https://generativelanguage.googleapis.com/v1beta/openai:gemini-2.5-flash",
               api_key_env="GEMINI_API_KEY",
               notes="Through Gemini's OpenAI-compatible endpoint."),
)

for _entry in _ENTRIES:
    register("model", _entry.name, description=f"{_entry.hub_id or _entry.api_uri} ({_entry.size or 'API'})")(_entry)
