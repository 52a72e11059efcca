"""The real-model pages' parts that know about model families: the model picker both pages share
(``pick``), the Real model page's views of a decoder's causal attention (``causal``) and the Inside the
model page's next-token section for decoders (``next_token``)."""
