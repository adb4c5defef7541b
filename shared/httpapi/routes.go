package httpapi

import "net/http"

// coreRoutes are the assistant, avatar, voice and line endpoints.
func (a *API) coreRoutes() []Route {
	return []Route{
		{Function: "assistants-list", Method: http.MethodGet, Pattern: "/v1/assistants", Handler: a.listAssistants},
		{Function: "assistants-create", Method: http.MethodPost, Pattern: "/v1/assistants", Handler: a.createAssistant},
		{Function: "assistants-get", Method: http.MethodGet, Pattern: "/v1/assistants/{id}", Handler: a.getAssistant},
		{Function: "assistants-versions-list", Method: http.MethodGet, Pattern: "/v1/assistants/{id}/versions", Handler: a.listAssistantVersions},
		{Function: "assistants-update", Method: http.MethodPatch, Pattern: "/v1/assistants/{id}", Handler: a.updateAssistant},
		{Function: "assistants-publish", Method: http.MethodPost, Pattern: "/v1/assistants/{id}/publish", Handler: a.publishAssistant},
		{Function: "assistants-activate", Method: http.MethodPost, Pattern: "/v1/assistants/{id}/activate", Handler: a.activateAssistant},
		{Function: "assistants-draft-restore", Method: http.MethodPost, Pattern: "/v1/assistants/{id}/draft/restore", Handler: a.restoreAssistantDraft},
		{Function: "assistants-duplicate", Method: http.MethodPost, Pattern: "/v1/assistants/{id}/duplicate", Handler: a.duplicateAssistant},
		{Function: "assistants-archive", Method: http.MethodPost, Pattern: "/v1/assistants/{id}/archive", Handler: a.archiveAssistant},
		{Function: "avatars-list", Method: http.MethodGet, Pattern: "/v1/avatars", Handler: a.listAvatars},
		{Function: "voices-list", Method: http.MethodGet, Pattern: "/v1/voices", Handler: a.listVoices},
		{Function: "lines-list", Method: http.MethodGet, Pattern: "/v1/lines", Handler: a.listLines},
		{Function: "lines-get", Method: http.MethodGet, Pattern: "/v1/lines/{id}", Handler: a.getLine},
		{Function: "lines-update", Method: http.MethodPatch, Pattern: "/v1/lines/{id}", Handler: a.updateLine},
		{Function: "lines-assign", Method: http.MethodPost, Pattern: "/v1/lines/{id}/assign", Handler: a.assignLine},
	}
}
