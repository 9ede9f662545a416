"""TemMed-Bench's published results (seeds/001): Table 3 (closed book) and Table 4 (retrieval augmentation),
transcribed row by row; in the paper's text each table is one line (47 and 54).

Values as printed (percent; "/" and "-", no number, are None): VQA accuracy and F1, report BLEU, ROUGE-L,
METEOR and their average, image-pair selection accuracy. "*" marks the paper's medical LVLMs. Table 4 prints
each model's closed-book row again, then its "+ Text-only RAG" and "+ Multi-Modal RAG" rows (the deltas it
prints beside them follow from these). The models answered the paper's released test set (TemMed-Bench on
Hugging Face) with the paper's prompts; its RAG rows retrieve with pairwise image retrieval.
"""

from __future__ import annotations

from medtemporal.published import PublishedColumn, PublishedRow, PublishedTable

PAPER = "the TemMed-Bench paper"
SOURCE = "seeds/001"
"""The paper's text in ``../shared/seeds`` the rows cite by line."""
COLUMNS = (PublishedColumn("VQA Acc", "task:vqa", "accuracy"), PublishedColumn("VQA F1", "task:vqa", "yesno_macro_f1"),
           PublishedColumn("BLEU", "task:report", "temmed_bleu_1"),
           PublishedColumn("ROUGE-L", "task:report", "temmed_rouge_l"),
           PublishedColumn("METEOR", "task:report", "temmed_meteor"),
           PublishedColumn("Avg.", "task:report", "temmed_report_avg"),
           PublishedColumn("Image Selection Acc", "task:image_pair", "accuracy"))
TABLE_3 = PublishedTable(PAPER, "Table 3", "Closed-book results on TemMed-Bench",
                         "closed book (our protocol direct), the paper's prompts", COLUMNS, (
    PublishedRow('LLaVA-Med *', (51.65, 35.23, 9.85, 6.51, 7.1, 7.82, None), line=47, section='Open-Source LVLMs'),
    PublishedRow('HuatuoGPT-Vision *', (53.0, 41.65, 7.0, 6.54, 18.3, 10.61, 33.29), line=47, section='Open-Source LVLMs'),
    PublishedRow('HealthGPT *', (46.3, 43.49, 11.61, 9.26, 18.7, 13.19, 33.64), line=47, section='Open-Source LVLMs'),
    PublishedRow('Qwen2.5-VL', (59.9, 57.6, 12.13, 10.46, 18.34, 13.64, 33.87), line=47, section='Open-Source LVLMs'),
    PublishedRow('Llama3.2-Vision', (45.65, 45.48, 8.57, 7.94, 15.77, 10.76, 33.06), line=47, section='Open-Source LVLMs'),
    PublishedRow('LLaVA-OneVision', (63.9, 62.12, 5.18, 6.07, 13.1, 8.12, 32.83), line=47, section='Open-Source LVLMs'),
    PublishedRow('Gemini 2.5 Flash', (47.3, 47.3, 20.23, 14.19, 22.79, 19.07, 39.33), line=47, section='Proprietary LVLMs'),
    PublishedRow('Claude 3.5 Sonnet', (69.9, 69.49, 17.17, 14.01, 24.91, 18.7, 33.53), line=47, section='Proprietary LVLMs'),
    PublishedRow('GPT 4o', (51.65, 47.16, 12.74, 12.32, 23.46, 16.17, 32.6), line=47, section='Proprietary LVLMs'),
    PublishedRow('GPT 4.1', (57.9, 57.51, 9.81, 11.67, 22.6, 14.69, 35.38), line=47, section='Proprietary LVLMs'),
    PublishedRow('GPT o4-mini', (79.15, 78.94, 20.54, 15.75, 25.71, 20.67, 35.03), line=47, section='Proprietary LVLMs'),
    PublishedRow('GPT o3', (64.4, 64.4, 16.99, 13.71, 25.77, 18.82, 38.05), line=47, section='Proprietary LVLMs'),
), source=SOURCE)
TABLE_4 = PublishedTable(PAPER, "Table 4", "Results with text-only and multi-modal retrieval augmentation",
                         "closed book, then rag-text and rag-multimodal (pairwise image retrieval)", COLUMNS, (
    PublishedRow('LLaVA-Med *', (51.65, 35.23, 9.85, 6.51, 7.1, 7.82, None), line=54, section='Open-Source LVLMs'),
    PublishedRow('LLaVA-Med * + Text-only RAG', (54.45, 41.71, 17.51, 13.35, 17.76, 16.21, None), line=54, section='Open-Source LVLMs'),
    PublishedRow('LLaVA-Med * + Multi-Modal RAG', (56.0, 44.7, 12.7, 10.74, 17.16, 13.53, None), line=54, section='Open-Source LVLMs'),
    PublishedRow('HuatuoGPT-Vision *', (53.0, 41.65, 7.0, 6.54, 18.3, 10.61, 33.29), line=54, section='Open-Source LVLMs'),
    PublishedRow('HuatuoGPT-Vision * + Text-only RAG', (59.5, 52.5, 8.12, 7.53, 20.63, 12.09, None), line=54, section='Open-Source LVLMs'),
    PublishedRow('HuatuoGPT-Vision * + Multi-Modal RAG', (61.75, 56.73, 9.5, 9.07, 21.81, 13.46, 32.02), line=54, section='Open-Source LVLMs'),
    PublishedRow('HealthGPT *', (46.3, 43.49, 11.61, 9.26, 18.7, 13.19, 33.64), line=54, section='Open-Source LVLMs'),
    PublishedRow('HealthGPT * + Text-only RAG', (59.05, 57.13, 13.46, 10.5, 20.68, 14.88, None), line=54, section='Open-Source LVLMs'),
    PublishedRow('HealthGPT * + Multi-Modal RAG', (69.9, 68.71, 14.96, 11.46, 20.42, 15.61, 33.53), line=54, section='Open-Source LVLMs'),
    PublishedRow('Qwen2.5-VL', (59.9, 57.6, 12.13, 10.46, 18.34, 13.64, 33.87), line=54, section='Open-Source LVLMs'),
    PublishedRow('Qwen2.5-VL + Text-only RAG', (63.15, 60.26, 12.8, 12.33, 22.12, 15.75, None), line=54, section='Open-Source LVLMs'),
    PublishedRow('Qwen2.5-VL + Multi-Modal RAG', (65.35, 63.03, 13.26, 12.43, 21.69, 15.79, 35.15), line=54, section='Open-Source LVLMs'),
    PublishedRow('Llama3.2-Vision', (45.65, 45.48, 8.57, 7.94, 15.77, 10.76, 33.06), line=54, section='Open-Source LVLMs'),
    PublishedRow('Llama3.2-Vision + Text-only RAG', (63.05, 58.76, 12.46, 10.86, 20.13, 14.48, None), line=54, section='Open-Source LVLMs'),
    PublishedRow('Llama3.2-Vision + Multi-Modal RAG', (64.1, 60.52, 14.26, 12.37, 21.45, 16.03, 35.15), line=54, section='Open-Source LVLMs'),
    PublishedRow('LLaVA-OneVision', (63.9, 62.12, 5.18, 6.07, 13.1, 8.12, 32.83), line=54, section='Open-Source LVLMs'),
    PublishedRow('LLaVA-OneVision + Text-only RAG', (78.25, 78.21, 9.3, 9.12, 19.81, 12.74, None), line=54, section='Open-Source LVLMs'),
    PublishedRow('LLaVA-OneVision + Multi-Modal RAG', (78.65, 78.35, 11.36, 10.15, 20.27, 13.93, 33.64), line=54, section='Open-Source LVLMs'),
    PublishedRow('Gemini 2.5 Flash', (47.3, 47.3, 20.23, 14.19, 22.79, 19.07, 39.33), line=54, section='Proprietary LVLMs'),
    PublishedRow('Gemini 2.5 Flash + Text-only RAG', (49.95, 49.2, 22.88, 17.27, 22.98, 21.04, None), line=54, section='Proprietary LVLMs'),
    PublishedRow('Gemini 2.5 Flash + Multi-Modal RAG', (51.4, 50.54, 23.49, 21.48, 23.17, 22.71, 40.26), line=54, section='Proprietary LVLMs'),
    PublishedRow('Claude 3.5 Sonnet', (69.9, 69.49, 17.17, 14.01, 24.91, 18.7, 33.53), line=54, section='Proprietary LVLMs'),
    PublishedRow('Claude 3.5 Sonnet + Text-only RAG', (66.25, 65.5, 20.58, 16.73, 27.27, 21.53, None), line=54, section='Proprietary LVLMs'),
    PublishedRow('Claude 3.5 Sonnet + Multi-Modal RAG', (74.15, 73.95, 22.35, 17.83, 26.44, 22.21, 37.35), line=54, section='Proprietary LVLMs'),
    PublishedRow('GPT 4o', (51.65, 47.16, 12.74, 12.32, 23.46, 16.17, 32.6), line=54, section='Proprietary LVLMs'),
    PublishedRow('GPT 4o + Text-only RAG', (60.1, 59.57, 21.06, 17.17, 26.74, 21.66, None), line=54, section='Proprietary LVLMs'),
    PublishedRow('GPT 4o + Multi-Modal RAG', (64.85, 64.42, 23.79, 19.14, 26.8, 23.24, 34.69), line=54, section='Proprietary LVLMs'),
    PublishedRow('GPT 4.1', (57.9, 57.51, 9.81, 11.67, 22.6, 14.69, 35.38), line=54, section='Proprietary LVLMs'),
    PublishedRow('GPT 4.1 + Text-only RAG', (58.5, 58.3, 17.07, 15.57, 27.48, 20.04, None), line=54, section='Proprietary LVLMs'),
    PublishedRow('GPT 4.1 + Multi-Modal RAG', (58.6, 58.55, 19.03, 16.56, 28.07, 21.22, 33.87), line=54, section='Proprietary LVLMs'),
    PublishedRow('GPT o4-mini', (79.15, 78.94, 20.54, 15.75, 25.71, 20.67, 35.03), line=54, section='Proprietary LVLMs'),
    PublishedRow('GPT o4-mini + Text-only RAG', (81.8, 81.78, 24.77, 19.42, 27.99, 24.06, None), line=54, section='Proprietary LVLMs'),
    PublishedRow('GPT o4-mini + Multi-Modal RAG', (77.8, 77.69, 24.3, 19.06, 26.46, 23.27, 34.69), line=54, section='Proprietary LVLMs'),
    PublishedRow('GPT o3', (64.4, 64.4, 16.99, 13.71, 25.77, 18.82, 38.05), line=54, section='Proprietary LVLMs'),
    PublishedRow('GPT o3 + Text-only RAG', (66.65, 66.6, 18.89, 15.33, 26.84, 20.35, None), line=54, section='Proprietary LVLMs'),
    PublishedRow('GPT o3 + Multi-Modal RAG', (65.65, 65.6, 18.72, 15.2, 27.16, 20.44, 39.56), line=54, section='Proprietary LVLMs'),
), source=SOURCE)
TABLES = (TABLE_3, TABLE_4)
"""Every table the paper prints of models' scores on TemMed-Bench's test set (Tables 5 and 8–10 are ablations
of retrievers and images on a few models, left out)."""
