"""Inside the model (pages/9_inside.py): interventions on the trained encoder and head roles."""

ERRORS_ZH = {
    "interpret_heads": (
        "“{value}”不是这个模型的头。",
        "按 层:头 的格式写，层为 0..{last_l}，头为 0..{last_h}，例如 0:3,5:11。",
    ),
    "interpret_token": (
        "“{value}”不是这个句子的词片位置。",
        "给出 0..{last} 之间的位置（[CLS] 是 0），用逗号分隔，例如 1,3。",
    ),
    "interpret_mask_all": ("所有词片都被遮蔽了，没有查询还有可以关注的键。", "至少留一个词片不遮蔽。"),
    "interpret_too_long": (
        "这个句子有 {n} 个词片；72 个头的图最多计算 {limit} 个词片。",
        "把它缩短到 {limit} 个词片以内。",
    ),
    "patch_length": (
        "修补按位置逐个复制一个头的输出，但两个句子分别有 {n} 和 {m} 个词片。",
        "让第二个句子一样长：换掉一个词，而不是增删词。",
    ),
}

STRINGS = {}
