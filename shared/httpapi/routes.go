package httpapi

import "net/http"

// Store tables, as template.yaml names them.
const (
	TableAccounts    = "accounts"
	TableAssistants  = "assistants"
	TableLines       = "lines"
	TableIdempotency = "idempotency"
	TableRateLimits  = "rate_limits"
)

// coreRoutes are the assistant, avatar, voice and line endpoints.
func (a *API) coreRoutes() []Route {
	ast := []string{TableAccounts, TableAssistants, TableIdempotency}
	lines := []string{TableAccounts, TableLines, TableAssistants, TableIdempotency}
	return []Route{
		{Function: "assistants-list", Method: http.MethodGet, Pattern: "/v1/assistants", Tables: ast, Handler: a.listAssistants},
		{Function: "assistants-create", Method: http.MethodPost, Pattern: "/v1/assistants", Tables: ast, Handler: a.createAssistant},
		{Function: "assistants-get", Method: http.MethodGet, Pattern: "/v1/assistants/{id}", Tables: ast, Handler: a.getAssistant},
		{Function: "assistants-versions-list", Method: http.MethodGet, Pattern: "/v1/assistants/{id}/versions", Tables: ast, Handler: a.listAssistantVersions},
		{Function: "assistants-update", Method: http.MethodPatch, Pattern: "/v1/assistants/{id}", Tables: ast, Handler: a.updateAssistant},
		{Function: "assistants-publish", Method: http.MethodPost, Pattern: "/v1/assistants/{id}/publish", Tables: ast, Handler: a.publishAssistant},
		{Function: "assistants-activate", Method: http.MethodPost, Pattern: "/v1/assistants/{id}/activate", Tables: ast, Handler: a.activateAssistant},
		{Function: "assistants-duplicate", Method: http.MethodPost, Pattern: "/v1/assistants/{id}/duplicate", Tables: ast, Handler: a.duplicateAssistant},
		{Function: "assistants-archive", Method: http.MethodPost, Pattern: "/v1/assistants/{id}/archive", Tables: ast, Handler: a.archiveAssistant},
		{Function: "avatars-list", Method: http.MethodGet, Pattern: "/v1/avatars", Tables: []string{TableAccounts}, Handler: a.listAvatars},
		{Function: "voices-list", Method: http.MethodGet, Pattern: "/v1/voices", Tables: []string{TableAccounts}, Handler: a.listVoices},
		{Function: "lines-list", Method: http.MethodGet, Pattern: "/v1/lines", Tables: lines, Handler: a.listLines},
		{Function: "lines-get", Method: http.MethodGet, Pattern: "/v1/lines/{id}", Tables: lines, Handler: a.getLine},
		{Function: "lines-update", Method: http.MethodPatch, Pattern: "/v1/lines/{id}", Tables: lines, Handler: a.updateLine},
		{Function: "lines-assign", Method: http.MethodPost, Pattern: "/v1/lines/{id}/assign", Tables: lines, Handler: a.assignLine},
	}
}
