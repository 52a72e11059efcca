"""What the charts write themselves: axis names, hover words, Complexity's theory curves."""

STRINGS = {
    "ax_query": ("query", "查询"),
    "ax_key": ("key", "键"),
    "ax_dim": ("dim", "维度"),
    "ax_step": ("step", "训练步"),
    "ax_window": ("window", "窗口"),
    "ax_feature": ("feature", "特征"),
    "ax_layer": ("layer", "层"),
    "ax_head": ("head", "头"),
    "ax_row": ("row", "行"),
    "ax_column": ("column", "列"),
    "ax_value": ("value", "值"),
    "ax_weight": ("weight", "权重"),
    "ax_token": ("token", "词元"),
    "ax_theory": ("{name} (theory)", "{name}（理论）"),
}

# The Complexity page's tables: a measured row's fields (attn_core.bench.Row) as column headers.
STRINGS |= {
    "cx_col_kernel": ("kernel", "实现"),
    "cx_col_seq_len": ("L", "L"),
    "cx_col_batch": ("batch", "批大小"),
    "cx_col_heads": ("heads", "头数"),
    "cx_col_d_head": ("d_head", "d_head"),
    "cx_col_device": ("device", "设备"),
    "cx_col_dtype": ("precision", "精度"),
    "cx_col_causal": ("causal", "因果"),
    "cx_col_median_ms": ("median (ms)", "中位数（毫秒）"),
    "cx_col_iqr_ms": ("IQR (ms)", "四分位距（毫秒）"),
    "cx_col_runs": ("timed runs", "计时次数"),
    "cx_col_warmup_calls": ("warm-up calls", "预热调用"),
    "cx_col_peak_bytes": ("peak bytes", "峰值字节"),
    "cx_col_peak_method": ("peak measured by", "峰值测量方式"),
    "cx_col_est_bytes": ("estimated bytes", "估计字节"),
    "cx_col_gflops": ("GFLOP/s", "GFLOP/s"),
    "cx_col_compile_s": ("compile (s)", "编译（秒）"),
    "cx_col_status": ("status", "状态"),
    "cx_col_slope": ("slope", "斜率"),
    "cx_col_share": ("% of matmul", "占矩阵乘法的 %"),
}

# The Tutorial page's tables and charts.
STRINGS |= {
    "tut_vocab": ("vocabulary (dc)", "词表（dc）"),
    "tut_ids": ("ids (sentence_int)", "编号（sentence_int）"),
    "tut_heads_title": ("'is' — 3 heads", "“is”——3 个头"),
    "tut_cross_title": ("cross-attention: target token 1 → source", "交叉注意力：目标序列第 1 个词元 → 源序列"),
}

# Multi-head's parameter table (attn_core.trace.param_count's keys).
STRINGS |= {
    "pc_projections": ("W_q, W_k, W_v", "W_q、W_k、W_v"),
    "pc_biases": ("biases", "偏置"),
    "pc_output": ("W_o", "W_o"),
    "pc_additive": ("additive score", "加性打分"),
    "pc_total": ("total", "合计"),
    "pc_formula_4d2": ("4·d_model²", "4·d_model²"),
}

STRINGS["cx_threads"] = ("{n} threads", "{n} 个线程")

STRINGS["present_formula"] = ("Formula and code", "公式与代码")

STRINGS["mask_nothing_padded"] = (
    (
        "Nothing is padded: this sentence ({n} tokens) is the longer of the two, so the padding mask lets every "
        "pair attend and the weights are unchanged. Make the second sentence longer to see [PAD] keys masked."
    ),
    (
        "没有填充：这个句子（{n} 个词元）是两句中较长的一句，所以填充掩码允许所有位置对，权重不变。"
        "把第二个句子写得更长，就能看到被屏蔽的 [PAD] 键。"
    ),
)
