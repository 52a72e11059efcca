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
    "pg_title": ("When do random features beat averaging?", "随机特征什么时候胜过直接平均？"),
    "pg_intro": (
        (
            "Performer's error minus uniform attention's (every query averaging the values), both measured against "
            "exact softmax on this sentence (head 0), as the logits are scaled (x) and for several numbers of "
            "features m. Below 0, Performer is closer to softmax than averaging is. Large logits make attention "
            "peaked and random features noisy; small logits and many features are where they help."
        ),
        (
            "Performer 的误差减去均匀注意力（每个查询直接平均所有值）的误差，两者都相对于这个句子（第 0 个头）上的精确 "
            "softmax，横轴是对 logits 的缩放倍数，每条线是一种特征数 m。低于 0 表示 Performer 比直接平均更接近 softmax。"
            "logits 越大，注意力越尖锐，随机特征的噪声越大；logits 小、特征多时，随机特征才有帮助。"
        ),
    ),
    "pg_chart": ("Performer's error minus uniform attention's", "Performer 误差减去均匀注意力误差"),
    "pg_x": ("logits × (times 1/√d_k)", "logits 倍数（乘以 1/√d_k）"),
    "pg_y": ("error − uniform's error", "误差 − 均匀注意力误差"),
    "pg_series": ("m = {m}", "m = {m}"),
    "pg_none": (
        "On this sentence no m beats averaging at any of these scales.",
        "在这个句子上，这些缩放下没有哪个 m 胜过直接平均。",
    ),
    "pg_best": (
        "Largest gain here: {gap:+.3f} with m = {m} at logits × {f:g}.",
        "这里最大的改进：m = {m}、logits × {f:g} 时为 {gap:+.3f}。",
    ),
}
