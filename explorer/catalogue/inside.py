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

STRINGS = {
    "page_inside": ("Inside the model", "模型内部"),
    "home_inside": (
        "Switch heads of the trained MiniLM off, mask tokens, patch and prune it, and find what each head does",
        "关闭训练好的 MiniLM 的头、遮蔽词元、修补与剪枝，并找出每个头做什么",
    ),
    "in_intro": (
        (
            "The bundled all-MiniLM-L6-v2 (6 layers × 12 heads) reads the sidebar's sentence. Change what its heads do "
            "and see whether it matters: the sentence embedding is the model's own pooling, the mean over the real tokens."
        ),
        (
            "内置的 all-MiniLM-L6-v2（6 层 × 12 个头）读取侧栏中的句子。改变它的头所做的事，看看是否重要："
            "句向量采用模型自己的池化方式，即对真实词元取平均。"
        ),
    ),
    "in_one_piece": (
        "There is only one piece between [CLS] and [SEP]: a head has little to move. Type a longer sentence.",
        "[CLS] 与 [SEP] 之间只有一个词片：头几乎无事可做。请输入更长的句子。",
    ),
    "in_second": (
        "A second sentence (optional): their cosine, and patching when it has the same number of pieces",
        "第二个句子（可选）：两句的余弦相似度；词片数相同时还可做修补",
    ),
    "in_mode": ("Ablation mode", "消融方式"),
    "in_mode_zero": ("zero: the head's output is 0 (Michel et al., 2019)", "zero：该头的输出置 0（Michel 等，2019）"),
    "in_mode_uniform": (
        "uniform: weights 1/n over the real tokens (Kovaleva et al., 2019)",
        "uniform：权重在真实词元上均为 1/n（Kovaleva 等，2019）",
    ),
    "in_mode_mean": (
        "mean: its output is its mean over the shipped corpus",
        "mean：输出替换为它在随附语料上的平均值",
    ),
    "in_heads": ("Heads to ablate (layer:head)", "要消融的头（层:头）"),
    "in_mask": ("Tokens to mask", "要遮蔽的词元"),
    "in_mask_note": (
        (
            "Masking a token takes it out of every attention row as a key, in every layer (its mask entry is 0, as for "
            "padding), and out of the mean that makes the embedding. It is still a query: its own row is computed."
        ),
        (
            "遮蔽一个词元，就是在每一层把它作为键从每一行注意力中去掉（它的掩码为 0，和填充一样），"
            "并且不计入求句向量的平均。它仍是查询：它自己那一行照常计算。"
        ),
    ),
    "in_all_heads": (
        "Every head is ablated: the embedding is then made by the feed-forward layers and the residual stream alone.",
        "所有头都被消融了：此时句向量只由前馈层和残差通路产生。",
    ),
    "in_cosine": ("Cosine to the original embedding", "与原句向量的余弦"),
    "in_pair": ("Cosine between the two sentences", "两句之间的余弦"),
    "in_changed": ("Largest change of a weight", "权重的最大变化"),
    "in_cosine_note": (
        "1 = the intervention changes nothing the embedding shows. The pair cosine has the same heads ablated in both sentences; the arrow is the change from the unablated pair.",
        "1 = 干预没有改变句向量。两句余弦在两个句子中消融同样的头；箭头是相对未消融时的变化。",
    ),
    "in_after": ("Every head's weights after the intervention", "干预后每个头的权重"),
    "in_after_long": (
        "{n} pieces: the 72 panels are drawn up to 64 pieces.",
        "{n} 个词片：72 个小图只在 64 个词片以内绘制。",
    ),
    "in_importance": ("Importance map", "重要性图"),
    "in_importance_note": (
        (
            "Each cell: 1 − cosine between the embedding with that head alone ablated (in the mode above) and the "
            "embedding with nothing ablated. 72 runs, batched layer by layer."
        ),
        "每个格子：只消融该头（按上面的方式）后的句向量与未消融句向量之间的 1 − 余弦。共 72 次运行，按层批量计算。",
    ),
    "in_importance_title": ("1 − cosine when this head alone is ablated", "只消融这个头时的 1 − 余弦"),
    "in_pair_title": (
        "Cosine between the two sentences when this head is ablated in both",
        "在两句中都消融这个头时两句的余弦",
    ),
    "in_patch": ("Patching", "激活修补"),
    "in_patch_note": (
        (
            "The second sentence is the corrupted run (e.g. one word swapped). For each head, its output in the "
            "corrupted run is replaced by its output on your sentence; a cell is the share of the embeddings' "
            "difference that this head alone restores (1 = all of it, 0 = none, below 0 = further away)."
        ),
        (
            "第二个句子是被破坏的运行（例如换掉一个词）。对每个头，把它在被破坏运行中的输出换成它在你的句子上的输出；"
            "每格是这个头单独恢复的句向量差异的比例（1 = 全部，0 = 没有，小于 0 = 更远）。"
        ),
    ),
    "in_patch_need": (
        "Type a second sentence with the same number of pieces (swap one word) to patch.",
        "输入一个词片数相同的第二个句子（换掉一个词）即可修补。",
    ),
    "in_patch_same": (
        "The two sentences give the same embedding: there is no difference to restore.",
        "两个句子给出相同的句向量：没有差异可恢复。",
    ),
    "in_patch_base": (
        "1 − cosine between the two sentences' embeddings: {d:.4f}.",
        "两句句向量的 1 − 余弦：{d:.4f}。",
    ),
    "in_patch_title": ("Share of the difference restored by patching this head", "修补这个头所恢复的差异比例"),
    "in_prune": ("Pruning", "剪枝"),
    "in_prune_note": (
        (
            "Greedy: at each step every remaining head is zero-ablated on top of those already removed, over {n} "
            "sentences of the shipped corpus, and the 10 % whose removal costs the embeddings least go. Computed once "
            "per server."
        ),
        (
            "贪心：每一步在已删除的头之上逐个零消融剩余的头，在随附语料的 {n} 个句子上评估，"
            "删去对句向量影响最小的 10 %。每个服务器只计算一次。"
        ),
    ),
    "in_prune_go": ("Compute the pruning curve", "计算剪枝曲线"),
    "in_computing": (
        "Computing (once per server; everyone shares the result)…",
        "正在计算（每个服务器一次，大家共享结果）…",
    ),
    "in_prune_series": ("MiniLM, mean cosine to the unpruned embeddings", "MiniLM：与未剪枝句向量的平均余弦"),
    "in_prune_title": ("Heads removed 10 % at a time", "每次删去 10 % 的头"),
    "in_prune_x": ("% of heads removed", "删去的头 %"),
    "in_michel": ("BERT on MNLI: ~40 % (Michel et al.)", "BERT 在 MNLI 上：约 40 %（Michel 等）"),
    "in_michel_note": (
        (
            "The dashed line is Michel et al.'s (2019) result for another model and task: about 40 % of BERT-base's "
            "heads can be removed before its MNLI accuracy drops. It is a reference, not a measurement of MiniLM."
        ),
        (
            "虚线是 Michel 等（2019）针对另一个模型和任务的结果：删去 BERT-base 约 40 % 的头后 MNLI 准确率才开始下降。"
            "它只是参照，不是对 MiniLM 的测量。"
        ),
    ),
    "in_roles": ("Head roles", "头的角色"),
    "in_roles_note": (
        (
            "On the probe set shipped with the app: for each relation, the head whose strongest key most often hits "
            "the labelled word, chosen on one half and scored on the other, beside the best fixed offset (Clark et "
            "al., 2019). Words split into pieces: attention to a word is summed over its pieces, from a word averaged; "
            "[CLS] and [SEP] are left out."
        ),
        (
            "在随附的探测句集上：对每种关系，找出最强键最常命中标注词的头，在一半句子上选出、在另一半上评分，"
            "并与最好的固定偏移基线并列（Clark 等，2019）。被切成多个词片的词：指向该词的注意力按词片求和，"
            "从该词出发的注意力按词片平均；不计 [CLS] 和 [SEP]。"
        ),
    ),
    "in_roles_go": ("Compute the head roles", "计算头的角色"),
    "in_rel_coref": ("pronoun → antecedent", "代词 → 先行词"),
    "in_rel_nsubj": ("verb → subject", "动词 → 主语"),
    "in_rel_dobj": ("verb → object", "动词 → 宾语"),
    "in_rel_det": ("determiner → noun", "限定词 → 名词"),
    "in_rel_amod": ("adjective → noun", "形容词 → 名词"),
    "in_rel_pobj": ("preposition → object", "介词 → 宾语"),
    "in_rel_prev": ("previous word", "前一个词"),
    "in_rel_next": ("next word", "后一个词"),
    "in_col_rel": ("relation", "关系"),
    "in_col_head": ("best head (select half)", "最佳头（选择半）"),
    "in_col_acc": ("held-out accuracy %", "留出准确率 %"),
    "in_col_base": ("offset baseline %", "偏移基线 %"),
    "in_col_offset": ("offset", "偏移"),
    "in_col_n": ("pairs (select / score)", "词对（选择 / 评分）"),
    "in_open": ("{rel}: open {l}:{h}", "{rel}：打开 {l}:{h}"),
    "in_clark": (
        (
            "Published for BERT-base, not MiniLM (Clark et al., 2019): determiner {det} % vs offset {det_b} %, direct "
            "object {dobj} % vs {dobj_b} %, coreference {coref} % vs nearest mention {coref_b} %; layers 6–10 put over "
            "half their attention on [SEP]. BERT-base has 12 layers and MiniLM {layers}, so layer numbers do not carry over."
        ),
        (
            "BERT-base 的已发表结果，不是 MiniLM（Clark 等，2019）：限定词 {det} % 对偏移 {det_b} %，直接宾语 {dobj} % 对 "
            "{dobj_b} %，共指 {coref} % 对最近提及 {coref_b} %；第 6–10 层一半以上的注意力落在 [SEP] 上。BERT-base 有 12 层，"
            "MiniLM 有 {layers} 层，所以层号不能对应。"
        ),
    ),
    "in_voita": (
        (
            "Voita et al. (2019): **positional** heads (≥ 90 % of their maxima at one relative position): {pos}. "
            "**Syntactic** heads (≥ 10 points above the offset baseline, held out): {syn}."
        ),
        "Voita 等（2019）：**位置**头（≥ 90 % 的最大值落在同一相对位置）：{pos}。**句法**头（留出集上比偏移基线高 ≥ 10 个百分点）：{syn}。",
    ),
    "in_sep_title": ("Mean weight on [SEP]", "落在 [SEP] 上的平均权重"),
    "in_cls_title": ("Mean weight on [CLS]", "落在 [CLS] 上的平均权重"),
    "in_sink_sep": ("1 − cosine, [SEP]'s weight removed", "去掉 [SEP] 权重后的 1 − 余弦"),
    "in_sink_content": ("1 − cosine, the same weight taken from content", "从内容词取走同样权重后的 1 − 余弦"),
    "in_sink_moved": ("mean weight moved", "平均移动的权重"),
    "in_sink_note": (
        (
            "The no-op reading says weight on [SEP] is where a head parks when it has nothing to do. The test: in "
            "every head remove each query's weight on [SEP] and renormalise, beside removing the same weight from the "
            "content tokens instead. If [SEP] were a no-op, the first would change the embedding less. The sidebar's "
            "global + window mask keeps a few global tokens every query can reach for the same reason: somewhere to "
            "put weight."
        ),
        (
            "“空操作”解读认为，落在 [SEP] 上的权重是头无事可做时的停靠处。检验：在每个头中去掉每个查询落在 [SEP] 上的权重并"
            "重新归一化，并与改为从内容词取走同样权重相比较。如果 [SEP] 是空操作，前者对句向量的改变应更小。侧栏的"
            "“全局 + 窗口”掩码保留几个每个查询都能到达的全局词元，也是出于同样的原因：给权重一个去处。"
        ),
    ),
    "in_probe_note": (
        (
            "{n} English sentences written for this app ({file}: a schema and a validator; labels placed by the "
            "patterns that wrote them and read through by hand)."
        ),
        "{n} 个为本应用编写的英文句子（{file}：带模式与校验器；标注由生成句子的模式放置，并经人工通读）。",
    ),
}
