//! The LLM providers on their real wire formats (OpenAI, Anthropic, replay) and their settings.

mod anthropic;
mod config;
mod openai;
mod replay;
