package persona

// Usage is what a worker counts of one call's use of the speech engines and the model,
// carried by the ended report (Report.Usage). The control plane adds the call's duration
// and billable seconds (call.Usage).
type Usage struct {
	// STTAudioMS is the caller audio handed to the recogniser: the caller's turns, not
	// the silence between them.
	STTAudioMS int64 `json:"stt_audio_ms"`
	// TTSCharacters counts the characters synthesised (Unicode code points): the
	// greeting, every reply sentence, the fillers and apologies.
	TTSCharacters int64 `json:"tts_characters"`
	// LLMPromptTokens and LLMCompletionTokens sum the model's requests of the call.
	LLMPromptTokens     int64 `json:"llm_prompt_tokens"`
	LLMCompletionTokens int64 `json:"llm_completion_tokens"`
	// Estimated: at least one request's tokens were counted by the worker (about four
	// characters a token) because the model sent no usage report of its own.
	Estimated bool `json:"estimated"`
}
