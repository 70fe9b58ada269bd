"""Understanding the prompt: which library motion a prompt asks for, the sentence encoder, composed prompts."""
