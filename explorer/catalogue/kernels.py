"""Strings of the kernels' own steps and of the Variants page's Performer chart (key -> (English, 简体中文))."""

STRINGS = {
    "vs_read_halves": ("Read out each half", "分别读出两半特征"),
    "vs_read_halves_note": (
        (
            "The m features come in two halves drawn independently ({m1} and {m2} features). Each half reads out "
            "the output on its own, φ(q_i)ᵀS / φ(q_i)ᵀz; their mean is the random-feature estimate, and how much "
            "the two halves disagree measures its noise."
        ),
        (
            "m 个特征分成独立抽取的两半（{m1} 个和 {m2} 个）。每一半各自读出输出 φ(q_i)ᵀS / φ(q_i)ᵀz；"
            "两者的平均是随机特征的估计，两半之间的差异衡量了它的噪声。"
        ),
    ),
    "vs_shrink": ("Shrink toward uniform", "向均匀注意力收缩"),
    "vs_shrink_note": (
        (
            "Random features are unbiased but noisy. Where the noise is larger than attention's own departure from "
            "uniform, averaging the values would do better, so the estimate is pulled toward the uniform output u "
            "by λ = max(0, 1 − noise / distance from uniform): here λ = {lam:.2f} (heads from {lam_min:.2f} to "
            "{lam_max:.2f}; 1 keeps the estimate, 0 is plain averaging). This is the variant's output (largest "
            "difference {max_diff:.1e})."
        ),
        (
            "随机特征是无偏的，但有噪声。当噪声比注意力本身偏离均匀分布的程度还大时，直接平均所有值反而更好，"
            "所以估计会按 λ = max(0, 1 − 噪声 / 与均匀分布的距离) 向均匀输出 u 收缩：这里 λ = {lam:.2f}"
            "（各头从 {lam_min:.2f} 到 {lam_max:.2f}；1 表示保留估计，0 表示直接平均）。"
            "这就是该变体的输出（最大差 {max_diff:.1e}）。"
        ),
    ),
}
