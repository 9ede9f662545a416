"""How answers are stated in the languages VLMs answer in besides English: the words the ``letter`` and
``yesno`` rules read (`medtemporal.scoring.extraction`), as regular-expression fragments.

Chinese first (Qwen-VL, InternVL, GLM-4V and other bilingual models often answer in Chinese whatever the
prompt's language), then Japanese, Korean, Spanish, Portuguese, French, German, Italian and Russian. Each
fragment is matched case-insensitively on the reply after Unicode NFKC, which turns full-width forms into
ASCII (``：`` → ``:``, ``Ｃ`` → ``C``) but keeps ``。`` and ``、``.

>>> import re
>>> bool(re.fullmatch(MARKERS, "正确答案是", re.I)), bool(re.fullmatch(MARKERS, "respuesta correcta es", re.I))
(True, True)
>>> YES_NO["是的"], YES_NO["nein"]
('Yes', 'No')
"""

from __future__ import annotations

CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
"""Kana, CJK ideographs and Hangul: characters of words written without spaces, which therefore do not glue
a Latin letter into a word as Latin letters do ("答案是C", "C选项", "정답은 C입니다" name C)."""

STOPS = "。、"
"""CJK punctuation that NFKC leaves as it is (the full-width comma, colon and marks become ASCII)."""

OPTION_WORDS = r"option|choice|letter|opción|opção|opzione|вариант|选项|選択肢|선택지"
"""Words for "option" that may stand between an answer statement and its letter ("答案是选项C")."""

FINALS = (
    r"最终(?:的)?(?:答案|选择|选项)(?:是|为|應|应)?|最終(?:的な)?(?:答え|回答|解答)(?:は)?"
    r"|최종\s*(?:정답|답변|답)(?:은|는)?"
    r"|\brespuesta\s+final(?:\s+es)?|\bresposta\s+final(?:\s+é)?|\bréponse\s+finale(?:\s+est)?"
    r"|\b(?:endgültige|finale)\s+antwort(?:\s+ist)?|\brisposta\s+finale(?:\s+è)?"
    r"|\b(?:окончательный|итоговый)\s+ответ"
)
"""Final-answer statements ("最终答案是C", "La respuesta final es C")."""

MARKERS = (
    r"(?:正确|最佳|最合适|最恰当)?(?:的)?答案(?:应该|应当|应)?(?:是|为|選|选)?"
    r"|正确的(?:选项|答案)?(?:是|为)"
    r"|(?:我(?:会|将)?|所以|因此|故|则|应该?)?(?:选择|选)(?!项)了?(?:的是)?"
    r"|(?:正解|答え|回答)(?:は)?|(?:を)?選びます"
    r"|(?<![\uac00-\ud7af])(?:정답|답변|답)(?:은|는|이)?"
    r"|\brespuesta\b(?:\s+correcta)?(?:\s+es)?|\belijo\b"
    r"|\bresposta\b(?:\s+correta)?(?:\s+é)?|\bescolho\b"
    r"|\bréponse\b(?:\s+correcte)?(?:\s+est)?|\bje\s+choisis\b"
    r"|\bantwort\b(?:\s+ist)?|\bich\s+wähle\b"
    r"|\brisposta\b(?:\s+corretta)?(?:\s+è)?|\bscelgo\b"
    r"|\bответ\b|\bя\s+выбираю\b"
)
"""Answer statements ("答案是C", "选C", "我选择C", "正确答案是C。", "答えはC", "정답은 C", "Respuesta: C",
"La réponse est C", "Die Antwort ist C", "Ответ: C")."""

POSTFIX = r"\s*(?:选项)?\s*(?:是|为)?\s*(?:正确|最佳|最合适|最恰当)"
"""What follows a letter that a statement names after it ("C选项正确", "C是正确的")."""

NOT_BEFORE = r"不是|不选|并非|而非|排除|\bno\s+es\b|\bnão\s+é\b|\bpas\b|\bnicht\b|\bне\b"
"""Negations before a letter ("不是A", "no es A"): a letter right after one names nothing in the loosest tier."""

JOINS = r"或者?|还是|以及|和|与|\b(?:o|ou|oder|или|y|e|et|und|и)\b"
"""Words joining two answers ("是或否", "A o B", "A和B"): the output names both."""

YES_NO: dict[str, str] = {
    "yes": "Yes", "no": "No",
    "是的": "Yes", "是": "Yes", "对": "Yes", "有": "Yes",
    "不是": "No", "否": "No", "不对": "No", "没有": "No", "无": "No",
    "はい": "Yes", "いいえ": "No",
    "네": "Yes", "예": "Yes", "아니요": "No", "아니오": "No",
    "sí": "Yes", "sì": "Yes", "sim": "Yes", "oui": "Yes", "ja": "Yes", "да": "Yes",
    "non": "No", "não": "No", "nein": "No", "нет": "No",
}
"""Yes/no words (lower case) and the answer each gives. A word counts only standing alone: followed by
punctuation, a space or the end ("是的，积液增多", "没有。"), never inside a longer word ("是否", "没有明显变化")."""

YES_NO_WORDS = "|".join(sorted(YES_NO, key=len, reverse=True))
"""`YES_NO`'s words as an alternation, longest first."""

CLOSERS = r"所以|因此|综上所述?|总之|\bso|\btherefore|\bthus|\bhence"
"""Words after which a reply's last yes/no word closes it ("…, so yes.", "综上所述，是。")."""
