"""Strings of the Explain page (is attention an explanation?)."""

STRINGS = {
    "page_explain": ("Is attention an explanation?", "注意力是解释吗？"),
    "home_explain": (
        (
            "Raw attention, rollout, flow, attention norms and value zeroing for the trained model's sentence "
            "embedding, beside leave-one-out, integrated gradients and Shapley values: how far they agree, how "
            "faithful each is, why two sentences are similar, and a table over 117 sentences."
        ),
        (
            "针对训练好的模型的句向量，把原始注意力、注意力 rollout、注意力 flow、注意力范数和值置零，与留一法、积分梯度和"
            " Shapley 值放在一起：它们有多一致、各自有多忠实、两个句子为什么相似，以及 117 个句子上的汇总表。"
        ),
    ),
    "ex_intro": (
        (
            "A heat map of attention looks like an explanation. Here the bundled all-MiniLM-L6-v2 (6 layers × 12 heads) "
            "embeds a sentence as the mean of its pieces' final vectors, and five explanations read from attention are "
            "set beside references that never look at attention."
        ),
        (
            "注意力热图看起来像是解释。这里内置的 all-MiniLM-L6-v2（6 层 × 12 个头）把句子嵌入为各词元最终向量的平均；"
            "从注意力读出的五种解释，与完全不看注意力的参照方法放在一起比较。"
        ),
    ),
    "ex_tab_sentence": ("One sentence", "一个句子"),
    "ex_computing": (
        "Computing every explanation (shared with anyone who asks for the same sentence)…",
        "正在计算所有解释（与请求同一句子的其他人共享）…",
    ),
    "ex_tab_pair": ("Two sentences", "两个句子"),
    "ex_tab_table": ("Over a corpus", "语料汇总"),
    "ex_sentence": ("Sentence", "句子"),
    "ex_removal": (
        "How a piece is removed (leave-one-out, Shapley, curves)",
        "如何移除一个词元（留一法、Shapley、曲线）",
    ),
    "ex_rm_delete": ("delete", "删除"),
    "ex_rm_mask": ("[MASK]", "[MASK]"),
    "ex_rm_attention": ("mask out of attention", "从注意力中屏蔽"),
    "ex_rm_delete_note": (
        "The piece is taken out; the later pieces move up one position.",
        "把该词元删去；后面的词元各前移一个位置。",
    ),
    "ex_rm_mask_note": (
        (
            "The piece is replaced by [MASK]: this model was not trained to read [MASK], so every removal moves the "
            "embedding a lot."
        ),
        "把该词元换成 [MASK]：这个模型没有学过读 [MASK]，所以每次移除都会让句向量移动很多。",
    ),
    "ex_rm_attention_note": (
        "The piece stays in place but no query may attend to it, and it is left out of the mean pooling.",
        "该词元留在原位，但任何查询都不能关注它，并且不参与平均池化。",
    ),
    "ex_m_raw": ("raw attention", "原始注意力"),
    "ex_m_rollout": ("rollout", "rollout"),
    "ex_m_flow": ("flow", "flow"),
    "ex_m_norm": ("attention norms", "注意力范数"),
    "ex_m_value_zeroing": ("value zeroing", "值置零"),
    "ex_m_loo": ("leave-one-out", "留一法"),
    "ex_m_ig": ("integrated gradients", "积分梯度"),
    "ex_m_shapley": ("Shapley", "Shapley"),
    "ex_notice_few_pieces": (
        "The sentence has {n} piece(s) of its own; a ranking needs at least {min}, so no correlation is given.",
        "这个句子自身只有 {n} 个词元；排序至少需要 {min} 个，因此不给出相关系数。",
    ),
    "ex_notice_many_unk": (
        "{unk} of {n} pieces are [UNK]: the model does not know them, and they all look alike to it.",
        "{n} 个词元中有 {unk} 个是 [UNK]：模型不认识它们，在它看来它们都一样。",
    ),
    "ex_notice_flow_capped": (
        "Flow is computed up to {limit} pieces (one max-flow per input and output pair); this sentence has {n}.",
        "flow 只对不超过 {limit} 个词元计算（每对输入和输出各一次最大流）；这个句子有 {n} 个。",
    ),
    "ex_notice_shapley_words": (
        "Exact Shapley values need 2^m passes; they are computed for up to {limit} words, this sentence has {n}.",
        "精确的 Shapley 值需要 2^m 次前向计算；只对不超过 {limit} 个词计算，这个句子有 {n} 个。",
    ),
    "ex_notice_identical": (
        (
            "The two sentences are the same: their cosine is 1, and each side's attributions explain the sentence "
            "against itself."
        ),
        "两个句子相同：余弦为 1，两边的归因都是在用句子解释它自己。",
    ),
    "ex_choices": ("What each method computes (its choices)", "每种方法计算什么（它的选择）"),
    "ex_choice_raw": (
        (
            "**Raw attention**: the last layer's weights averaged over its 12 heads, then over the queries (the "
            "pooled embedding averages every position)."
        ),
        "**原始注意力**：最后一层的权重在 12 个头上取平均，再在查询上取平均（池化后的句向量是对所有位置求平均）。",
    ),
    "ex_choice_rollout": (
        (
            "**Rollout** (Abnar & Zuidema, 2020): A = 0.5·W + 0.5·I per layer (heads averaged), multiplied from layer 1 "
            "up, averaged over the outputs."
        ),
        "**rollout**（Abnar 与 Zuidema，2020）：每层 A = 0.5·W + 0.5·I（头取平均），从第 1 层起连乘，再在输出上取平均。",
    ),
    "ex_choice_flow": (
        (
            "**Flow**: the same graph as a network of pipes; for each input and each output position the max-flow "
            "between them (scipy's maximum_flow), averaged over the outputs. One super-sink joined to every output "
            "would only measure layer 1, so depth is kept this way; up to 32 pieces."
        ),
        (
            "**flow**：把同一张图看作管道网络；对每个输入与每个输出位置求二者之间的最大流（scipy 的 maximum_flow），"
            "再在输出上平均。若用一个连到所有输出的超级汇点，只会测到第 1 层，所以这样保留深度；最多 32 个词元。"
        ),
    ),
    "ex_choice_norm": (
        (
            "**Attention norms** (Kobayashi et al., 2020): ‖Σ_h α^h_ij f^h(x_j)‖, the weight times the transformed "
            "value, so a piece that gets weight but carries a small vector counts little; last layer, mean over "
            "queries."
        ),
        (
            "**注意力范数**（Kobayashi 等，2020）：‖Σ_h α^h_ij f^h(x_j)‖，即权重乘以变换后的值向量，"
            "得到权重但携带小向量的词元贡献很小；最后一层，在查询上取平均。"
        ),
    ),
    "ex_choice_value_zeroing": (
        (
            "**Value zeroing** (Mohebbi et al., 2023): zero piece j's value vector in every head of a layer, score "
            "1 − cos of each output, normalise each row, roll the layers out."
        ),
        (
            "**值置零**（Mohebbi 等，2023）：在某层所有头中把词元 j 的值向量置零，对每个输出计算 1 − cos，"
            "每行归一化，再跨层 rollout。"
        ),
    ),
    "ex_choice_loo": (
        (
            "**Leave-one-out**: 1 − cos(e(x), e(x without piece i)), with the removal chosen above; the direct 1/n "
            "share of the pooling is shown apart."
        ),
        "**留一法**：1 − cos(e(x), e(去掉词元 i 的 x))，移除方式如上所选；平均池化中直接的 1/n 份额单独显示。",
    ),
    "ex_choice_ig": (
        (
            "**Integrated gradients** of cos(e(x′), e(x)) on the word embeddings from [CLS] [PAD] … [SEP], 32 "
            "Gauss-Legendre steps. Plain gradient × input of the self-cosine is useless: at x′ = x the cosine is at "
            "its maximum, its gradient is zero."
        ),
        (
            "**积分梯度**：对 cos(e(x′), e(x)) 在词向量上从 [CLS] [PAD] … [SEP] 积分，32 个高斯-勒让德节点。"
            "直接用梯度 × 输入没有用：在 x′ = x 处余弦取最大值，梯度为零。"
        ),
    ),
    "ex_choice_shapley": (
        (
            "**Shapley**: exact values of the words (at most 10: 2^10 subsets in batched passes), v(S) = cos(e(only "
            "the words of S), e(x)); they catch two words that each make the other redundant, which leave-one-out "
            "misses."
        ),
        (
            "**Shapley**：词的精确 Shapley 值（最多 10 个词：2^10 个子集，批量计算），v(S) = cos(e(只保留 S 中的词), e(x))；"
            "它能发现两个互相可替代的词，而留一法会漏掉。"
        ),
    ),
    "ex_choice_curves": (
        (
            "**Deletion and insertion**: remove (or keep only) the top k % of the pieces by a method, k in 1/5/10/20/50 "
            "%, and measure 1 − cos to the full embedding; the area is the mean over k."
        ),
        (
            "**删除与插入曲线**：按某方法移除（或只保留）排名前 k % 的词元，k 取 1/5/10/20/50 %，"
            "计算与完整句向量的 1 − cos；面积为对 k 的平均。"
        ),
    ),
    "ex_choice_correlation": (
        (
            "**Agreement**: Spearman's ρ and Kendall's τ over the sentence's own pieces ([CLS] and [SEP] apart), with a "
            "bootstrap 95 % interval for ρ; Shapley is compared per word."
        ),
        (
            "**一致性**：在句子自身的词元上计算 Spearman ρ 与 Kendall τ（[CLS] 和 [SEP] 单独报告），ρ 附自助法 95 % "
            "区间；与 Shapley 的比较按词进行。"
        ),
    ),
    "ex_overview": ("Every explanation, each scaled to its largest value", "所有解释，各自按最大值缩放"),
    "ex_overview_note": (
        (
            "Rows have different units, so each is divided by its largest absolute value; compare the patterns, not "
            "the heights."
        ),
        "各行单位不同，所以每行除以其最大绝对值；请比较模式，而不是高度。",
    ),
    "ex_layer": ("Layer (rollout, flow and value zeroing up to it)", "层（rollout、flow 和值置零累计到该层）"),
    "ex_layer_title": ("The methods at layer {l}", "第 {l} 层的各方法"),
    "ex_refs": ("References that do not come from attention", "不来自注意力的参照"),
    "ex_loo_total": ("leave-one-out", "留一法"),
    "ex_loo_direct": ("direct 1/n share", "直接的 1/n 份额"),
    "ex_loo_title": ("Leave-one-out ({removal}) and the direct share", "留一法（{removal}）与直接份额"),
    "ex_loo_note": (
        (
            "The direct share is what removing the piece's own final vector from the mean changes, nothing re-run; "
            "the rest of leave-one-out is its effect through the other pieces."
        ),
        "直接份额是只把该词元自己的最终向量从平均中去掉所带来的变化，不重新计算；留一法的其余部分是它通过其他词元产生的影响。",
    ),
    "ex_ig_title": ("Integrated gradients ({steps} steps)", "积分梯度（{steps} 步）"),
    "ex_ig_error": ("completeness error", "完备性误差"),
    "ex_ig_note": (
        (
            "The attributions sum to {total:.5f}; 1 − cos(e(baseline), e(x)) = {delta:.5f}. [CLS] and [SEP] are "
            "the baseline's too, so they get 0."
        ),
        "归因之和为 {total:.5f}；1 − cos(e(基线), e(x)) = {delta:.5f}。[CLS] 和 [SEP] 与基线相同，所以归因为 0。",
    ),
    "ex_agree": ("How far they agree", "它们有多一致"),
    "ex_agree_note": (
        "One sentence is a handful of pieces: read the interval, not the single ρ.",
        "一个句子只有几个词元：请看区间，而不是单个 ρ。",
    ),
    "ex_method": ("method", "方法"),
    "ex_no_corr_constant": ("no correlation: a ranking is constant", "无相关：有一个排序是常数"),
    "ex_no_corr_too_few": ("no correlation: fewer than 3 pieces", "无相关：词元少于 3 个"),
    "ex_specials": (
        "[CLS] and [SEP], left out of the correlations: each method's share of its total there.",
        "[CLS] 和 [SEP] 不计入相关系数：各方法在它们上的份额。",
    ),
    "ex_faithful": ("How faithful each is", "各自有多忠实"),
    "ex_deletion": ("Deletion: remove the top k %", "删除：移除前 k %"),
    "ex_insertion": ("Insertion: keep only the top k %", "插入：只保留前 k %"),
    "ex_deletion_area": ("deletion area (higher: more faithful)", "删除面积（越高越忠实）"),
    "ex_insertion_area": ("insertion area (lower: more faithful)", "插入面积（越低越忠实）"),
    "ex_curves_note": (
        "A faithful ranking changes the embedding most when its top pieces go, and least when only they stay.",
        "忠实的排序在移除其排名靠前的词元时让句向量变化最大，只保留它们时变化最小。",
    ),
    "ex_shapley": ("Exact Shapley values", "精确 Shapley 值"),
    "ex_shapley_intro": (
        "Computed on request, for sentences of at most {limit} words.",
        "按需计算，只适用于不超过 {limit} 个词的句子。",
    ),
    "ex_shapley_button": ("Compute Shapley values ({n} passes)", "计算 Shapley 值（{n} 次前向）"),
    "ex_shapley_title": ("Shapley value of each word", "每个词的 Shapley 值"),
    "ex_shapley_check": (
        "Σ φ = {total:.5f} = v(all) − v(none) = {v_all:.5f} − {v_none:.5f}.",
        "Σ φ = {total:.5f} = v(全部) − v(无) = {v_all:.5f} − {v_none:.5f}。",
    ),
    "ex_pair_intro": (
        "Why are two sentences similar? Their cosine, each piece's part in it, and which pairs of pieces carry it.",
        "两个句子为什么相似？它们的余弦、每个词元在其中的作用，以及哪些词元对承载了相似度。",
    ),
    "ex_pair_example": ("Example", "示例"),
    "ex_pair_negation": ("negation", "否定"),
    "ex_pair_roles": ("swapped roles", "角色互换"),
    "ex_pair_predicates": ("same nouns, different predicate", "相同名词、不同谓语"),
    "ex_pair_a": ("Sentence a", "句子 a"),
    "ex_pair_b": ("Sentence b", "句子 b"),
    "ex_pair_cosine": ("cos(e(a), e(b))", "cos(e(a), e(b))"),
    "ex_pair_ig_a": ("a's pieces: integrated gradients of cos(e(a′), e(b))", "a 的词元：cos(e(a′), e(b)) 的积分梯度"),
    "ex_pair_ig_b": ("b's pieces: integrated gradients of cos(e(b′), e(a))", "b 的词元：cos(e(b′), e(a)) 的积分梯度"),
    "ex_pair_complete": (
        "Completeness error {err:.3f} % (the sum is the cosine less the baseline's, {delta:.4f}).",
        "完备性误差 {err:.3f} %（总和等于余弦减去基线的余弦，{delta:.4f}）。",
    ),
    "ex_pair_pairs": ("Which pairs of pieces carry the cosine", "哪些词元对承载了余弦"),
    "ex_pair_pairs_note": (
        (
            "Mean pooling is linear, so the cosine {cos:.4f} splits exactly over pairs: h_i^a · h_j^b / (n_a n_b "
            "‖e(a)‖ ‖e(b)‖); the cells sum to it."
        ),
        (
            "平均池化是线性的，所以余弦 {cos:.4f} 可以精确分解到词元对上：h_i^a · h_j^b / (n_a n_b ‖e(a)‖ ‖e(b)‖)；"
            "各格之和等于它。"
        ),
    ),
    "ex_pair_attention": (
        "**What attention alone would have said** (rollout of each sentence):",
        "**只看注意力会得出什么**（各句的 rollout）：",
    ),
    "ex_pair_roll_a": ("rollout of a", "a 的 rollout"),
    "ex_pair_roll_b": ("rollout of b", "b 的 rollout"),
    "ex_pair_agree": ("Rollout against integrated gradients: {text}", "rollout 与积分梯度：{text}"),
    "ex_pair_shapley_button": ("Compute Shapley values of both sentences", "计算两个句子的 Shapley 值"),
    "ex_pair_shapley_long": ("More than 10 words: no exact Shapley values.", "超过 10 个词：不计算精确 Shapley 值。"),
    "ex_pair_shapley_a": ("a's words: Shapley values for cos(·, e(b))", "a 的词：对 cos(·, e(b)) 的 Shapley 值"),
    "ex_pair_shapley_b": ("b's words: Shapley values for cos(·, e(a))", "b 的词：对 cos(·, e(a)) 的 Shapley 值"),
    "ex_table_missing": (
        "The corpus table has not been computed: run python -m attn_core explain-table --json.",
        "语料汇总表尚未计算：请运行 python -m attn_core explain-table --json。",
    ),
    "ex_table_intro": (
        (
            "Spearman's ρ between each method and each reference, mean ± s.d. over {n} sentences written for this app "
            "(removal: {removal}; integrated gradients with {steps} steps), as Abnar & Zuidema's Tables 1–2 lay it out."
        ),
        (
            "各方法与各参照之间的 Spearman ρ，对为本应用编写的 {n} 个句子取均值 ± 标准差（移除方式：{removal}；"
            "积分梯度 {steps} 步），排版同 Abnar 与 Zuidema 的表 1–2。"
        ),
    ),
    "ex_layer_n": ("layer {l}", "第 {l} 层"),
    "ex_table_against": ("against {ref}", "对照 {ref}"),
    "ex_published": (
        "Published figures (as quoted in the issue that asked for this page), with their models and tasks",
        "已发表的数字（按提出本页需求的议题所引），附其模型与任务",
    ),
    "ex_pub_source": ("source", "来源"),
    "ex_pub_model": ("model", "模型"),
    "ex_pub_task": ("task", "任务"),
    "ex_pub_methods": ("methods", "方法"),
    "ex_pub_reference": ("against", "对照"),
    "ex_pub_spearman": ("Spearman", "Spearman"),
    "ex_corpus": ("The corpus", "语料"),
    "ex_reading_none": ("The table has no defined correlation to read.", "表中没有可读的相关系数。"),
    "ex_reading_rank": (
        (
            "Over {n} sentences at layer {l}, averaged over the references, {best} agrees best (ρ {b:+.2f}) and {worst} "
            "least (ρ {w:+.2f})."
        ),
        "在 {n} 个句子上、第 {l} 层，对各参照取平均，{best} 最一致（ρ {b:+.2f}），{worst} 最不一致（ρ {w:+.2f}）。",
    ),
    "ex_reading_attention": (
        (
            "The three methods that read only attention weights (raw, rollout, flow) average ρ {v:+.2f}; Abnar & "
            "Zuidema found about 0.1 against input gradients on DistilBERT."
        ),
        (
            "只读注意力权重的三种方法（原始、rollout、flow）平均 ρ {v:+.2f}；Abnar 与 Zuidema 在 DistilBERT 上对照输入梯度"
            "得到约 0.1。"
        ),
    ),
    "ex_reading_whole_more": (
        (
            "The methods that also read the values (norms, value zeroing) average {v:+.2f}, higher, as the ALTI "
            "authors' 0.4–0.7 for whole-layer methods suggests."
        ),
        "同时读取值向量的方法（范数、值置零）平均 {v:+.2f}，更高，与 ALTI 作者对整层方法报告的 0.4–0.7 相符。",
    ),
    "ex_reading_whole_less": (
        (
            "The methods that also read the values (norms, value zeroing) average {v:+.2f}: here they do not do "
            "better, unlike the ALTI authors' 0.4–0.7."
        ),
        "同时读取值向量的方法（范数、值置零）平均 {v:+.2f}：这里它们并没有更好，不同于 ALTI 作者报告的 0.4–0.7。",
    ),
    "ex_reading_rollout": (
        "Rollout against integrated gradients: {v:+.2f} (the ALTI authors' files: −0.03 on BERT/SST-2).",
        "rollout 对照积分梯度：{v:+.2f}（ALTI 作者的结果文件：BERT/SST-2 上为 −0.03）。",
    ),
    "ex_reading_layers": (
        "Raw attention against integrated gradients goes from {a:+.2f} at layer 1 to {b:+.2f} at layer {l}.",
        "原始注意力对照积分梯度，从第 1 层的 {a:+.2f} 变为第 {l} 层的 {b:+.2f}。",
    ),
    "ex_reading_caution": (
        (
            "These are a sentence encoder's figures on short sentences, not a classifier's: the published rows are "
            "beside them, not the same experiment."
        ),
        "这些是句子编码器在短句上的数字，而不是分类器的：已发表的行只是并列参考，并不是同一个实验。",
    ),
}

ERRORS_ZH = {
    "explain_no_words": (
        "{field} 没有字母或数字，只有标点或符号：没有可解释的内容。",
        "请输入包含词语的句子，例如 'The cat slept on the warm windowsill'。",
    ),
    "explain_too_long": (
        "{field} 有 {n} 个词元；解释只对不超过 {limit} 个词元计算（留一法每个词元要计算一次）。",
        "请缩短到 {limit} 个词元以内（一个长词可能占好几个词元）。",
    ),
    "explain_second_empty": ("第二个句子是空的。", "请输入要比较的第二个句子，或清除比较。"),
}
