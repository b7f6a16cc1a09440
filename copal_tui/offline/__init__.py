"""The offline engine: deterministic heuristics that stand in for models. NOT a language model.

It answers the same messages a real model gets (structured tasks through the COPAL-TASK trailer,
target-chatbot calls through the four-block system prompt) with rule-based grounding, a
composition filter, template-based facet query generation with contracts, three reference
chatbots and a cue-matching judge. Outputs say what they are: rationales start
"offline heuristic:". Same input, same output: there is no randomness anywhere.

Entry point: `copal_tui.offline.engine.answer(name, messages) -> str`. The package imports
neither litellm nor textual (the litellm adapter lives in `copal_tui.llm.offline_provider`).
"""
