package bridgeline

// One typed method for each operation of openapi.yaml: Client.X calls
// Generated.XWithResponse and answers the documented object or an error
// (TestEveryOperationHasATypedMethod keeps the two lists equal). POSTs need no body
// argument where the contract's body is empty. Each method takes RequestEditorFns last,
// such as WithIdempotencyKey.

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"sort"
)

// Assistants.

// CreateAssistant creates an assistant with its first draft (POST /v1/assistants). Only
// the name is required; publishing needs a name, system_prompt, greeting and avatar_id.
func (c *Client) CreateAssistant(ctx context.Context, body AssistantCreate, opts ...RequestEditorFn) (*Assistant, error) {
	r, err := c.Generated.CreateAssistantWithResponse(ctx, nil, body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON201)
}

// GetAssistant returns an assistant with its draft and recent versions
// (GET /v1/assistants/{id}).
func (c *Client) GetAssistant(ctx context.Context, id string, opts ...RequestEditorFn) (*Assistant, error) {
	r, err := c.Generated.GetAssistantWithResponse(ctx, id, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// UpdateAssistant changes an assistant's draft (PATCH /v1/assistants/{id}); calls go on
// with the active version until the next PublishAssistant.
func (c *Client) UpdateAssistant(ctx context.Context, id string, body AssistantUpdate, opts ...RequestEditorFn) (*Assistant, error) {
	r, err := c.Generated.UpdateAssistantWithResponse(ctx, id, body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// ListAssistants returns one page of the account's assistants, newest first
// (GET /v1/assistants); Assistants walks every page.
func (c *Client) ListAssistants(ctx context.Context, params *ListAssistantsParams, opts ...RequestEditorFn) (*AssistantList, error) {
	r, err := c.Generated.ListAssistantsWithResponse(ctx, params, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// PublishAssistant snapshots the draft into the next numbered, immutable version and
// makes it the active one (POST /v1/assistants/{id}/publish). It answers the assistant:
// its ActiveVersionId and Versions[0] are the new version.
func (c *Client) PublishAssistant(ctx context.Context, id string, opts ...RequestEditorFn) (*Assistant, error) {
	r, err := c.Generated.PublishAssistantWithResponse(ctx, id, nil, EmptyObject{}, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON201)
}

// ActivateAssistantVersion makes an earlier (or later) version the active one
// (POST /v1/assistants/{id}/activate).
func (c *Client) ActivateAssistantVersion(ctx context.Context, id string, body AssistantActivate, opts ...RequestEditorFn) (*Assistant, error) {
	r, err := c.Generated.ActivateAssistantVersionWithResponse(ctx, id, nil, body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// ArchiveAssistant archives an assistant (POST /v1/assistants/{id}/archive): it can no
// longer be assigned or take calls.
func (c *Client) ArchiveAssistant(ctx context.Context, id string, opts ...RequestEditorFn) (*Assistant, error) {
	r, err := c.Generated.ArchiveAssistantWithResponse(ctx, id, nil, EmptyObject{}, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// RotateAssistantToolSecret gives the assistant a new tool secret, in this answer only
// (ToolSecret); the old one keeps signing its tool calls beside it for 24 h, so verify
// with both meanwhile (POST /v1/assistants/{id}/rotate_tool_secret).
func (c *Client) RotateAssistantToolSecret(ctx context.Context, id string, opts ...RequestEditorFn) (*Assistant, error) {
	r, err := c.Generated.RotateAssistantToolSecretWithResponse(ctx, id, nil, EmptyObject{}, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// RestoreAssistantDraft replaces the draft with a copy of a version
// (POST /v1/assistants/{id}/draft/restore).
func (c *Client) RestoreAssistantDraft(ctx context.Context, id string, body AssistantDraftRestore, opts ...RequestEditorFn) (*Assistant, error) {
	r, err := c.Generated.RestoreAssistantDraftWithResponse(ctx, id, nil, body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// DuplicateAssistant creates a new assistant whose draft is a copy of this one's
// (POST /v1/assistants/{id}/duplicate).
func (c *Client) DuplicateAssistant(ctx context.Context, id string, body AssistantDuplicate, opts ...RequestEditorFn) (*Assistant, error) {
	r, err := c.Generated.DuplicateAssistantWithResponse(ctx, id, nil, body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON201)
}

// ListAssistantVersions returns one page of an assistant's versions, newest first
// (GET /v1/assistants/{id}/versions); AssistantVersions walks every page.
func (c *Client) ListAssistantVersions(ctx context.Context, id string, params *ListAssistantVersionsParams, opts ...RequestEditorFn) (*AssistantVersionList, error) {
	r, err := c.Generated.ListAssistantVersionsWithResponse(ctx, id, params, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// ListAssistantQuality returns one page of an assistant's versions' turn-taking quality,
// newest version first (GET /v1/assistants/{id}/quality): each version's calls' metrics
// summed and its reply latency percentiles over every reply of every call.
func (c *Client) ListAssistantQuality(ctx context.Context, id string, params *ListAssistantQualityParams, opts ...RequestEditorFn) (*VersionQualityList, error) {
	r, err := c.Generated.ListAssistantQualityWithResponse(ctx, id, params, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// ListAvatars returns the avatars an assistant can wear (GET /v1/avatars).
func (c *Client) ListAvatars(ctx context.Context, opts ...RequestEditorFn) (*AvatarList, error) {
	r, err := c.Generated.ListAvatarsWithResponse(ctx, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// AvatarSheetFiles are the files of a character sheet by part name (base, mouth_closed,
// mouth_half, mouth_open, eyes_closed, idle_1..idle_4), each PNG or WebP.
type AvatarSheetFiles map[string][]byte

// CreateAvatar uploads a character sheet as an avatar of the account's own
// (POST /v1/avatars, multipart/form-data): sheet is the JSON field (name, face,
// anchors), files the images by part name.
func (c *Client) CreateAvatar(ctx context.Context, sheet []byte, files AvatarSheetFiles, opts ...RequestEditorFn) (*Avatar, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if err := mw.WriteField("sheet", string(sheet)); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		w, err := mw.CreateFormFile(name, name)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(files[name]); err != nil {
			return nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	r, err := c.Generated.CreateAvatarWithBodyWithResponse(ctx, nil, mw.FormDataContentType(), &body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON201)
}

// GetAvatar returns an avatar, with preview URLs of an own one's parts that work for 15
// minutes (GET /v1/avatars/{id}).
func (c *Client) GetAvatar(ctx context.Context, id string, opts ...RequestEditorFn) (*Avatar, error) {
	r, err := c.Generated.GetAvatarWithResponse(ctx, id, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// AvatarDeleted is the answer of DeleteAvatar: the avatar's id (the API answers 204 with
// no body).
type AvatarDeleted struct{ ID string }

// DeleteAvatar removes an avatar of the account's own for good (DELETE
// /v1/avatars/{id}); refused with avatar_in_use while a published version names it.
func (c *Client) DeleteAvatar(ctx context.Context, id string, opts ...RequestEditorFn) (*AvatarDeleted, error) {
	r, err := c.Generated.DeleteAvatarWithResponse(ctx, id, opts...)
	if err != nil {
		return nil, err
	}
	if err := Check(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return &AvatarDeleted{ID: id}, nil
}

// ListVoices returns the voices the deployment offers (GET /v1/voices).
func (c *Client) ListVoices(ctx context.Context, opts ...RequestEditorFn) (*VoiceList, error) {
	r, err := c.Generated.ListVoicesWithResponse(ctx, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// ListModels returns the language models the deployment offers (GET /v1/models).
func (c *Client) ListModels(ctx context.Context, opts ...RequestEditorFn) (*ModelList, error) {
	r, err := c.Generated.ListModelsWithResponse(ctx, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// Lines.

// ListLines returns one page of the account's lines (GET /v1/lines); Lines walks every
// page.
func (c *Client) ListLines(ctx context.Context, params *ListLinesParams, opts ...RequestEditorFn) (*LineList, error) {
	r, err := c.Generated.ListLinesWithResponse(ctx, params, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// GetLine returns a line (GET /v1/lines/{id}).
func (c *Client) GetLine(ctx context.Context, id string, opts ...RequestEditorFn) (*Line, error) {
	r, err := c.Generated.GetLineWithResponse(ctx, id, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// UpdateLine changes a line (PATCH /v1/lines/{id}): its inbound_mode (who answers its
// inbound calls), decision timeout, metadata and variables.
func (c *Client) UpdateLine(ctx context.Context, id string, body LineUpdate, opts ...RequestEditorFn) (*Line, error) {
	r, err := c.Generated.UpdateLineWithResponse(ctx, id, body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// AssignLineAssistant gives a line's inbound calls to an assistant
// (POST /v1/lines/{id}/assign). The assistant answers them when the line's inbound_mode
// is assistant; the answered Line shows it.
func (c *Client) AssignLineAssistant(ctx context.Context, id string, body LineAssign, opts ...RequestEditorFn) (*Line, error) {
	r, err := c.Generated.AssignLineAssistantWithResponse(ctx, id, nil, body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// Sessions.

// CreateSession creates a room, dials PlatformHandle into it and answers what your
// client needs to join: RtcUrl and a ParticipantToken for that room only
// (POST /v1/sessions). Hand those to the browser, never the API key.
func (c *Client) CreateSession(ctx context.Context, body SessionCreate, opts ...RequestEditorFn) (*SessionCreated, error) {
	r, err := c.Generated.CreateSessionWithResponse(ctx, nil, body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON201)
}

// GetSession returns a session (GET /v1/sessions/{id}).
func (c *Client) GetSession(ctx context.Context, id string, opts ...RequestEditorFn) (*Session, error) {
	r, err := c.Generated.GetSessionWithResponse(ctx, id, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// UpdateSession changes a session's metadata (PATCH /v1/sessions/{id}).
func (c *Client) UpdateSession(ctx context.Context, id string, body SessionUpdate, opts ...RequestEditorFn) (*Session, error) {
	r, err := c.Generated.UpdateSessionWithResponse(ctx, id, body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// DeleteSession ends a session (DELETE /v1/sessions/{id}): the room is deleted and
// every client disconnected. It answers the ended session.
func (c *Client) DeleteSession(ctx context.Context, id string, opts ...RequestEditorFn) (*Session, error) {
	r, err := c.Generated.DeleteSessionWithResponse(ctx, id, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// ListSessions returns one page of the account's sessions, newest first
// (GET /v1/sessions); Sessions walks every page.
func (c *Client) ListSessions(ctx context.Context, params *ListSessionsParams, opts ...RequestEditorFn) (*SessionList, error) {
	r, err := c.Generated.ListSessionsWithResponse(ctx, params, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// CreateSessionToken mints another participant token for a session's room, one per
// client, or a watch-only one (POST /v1/sessions/{id}/tokens).
func (c *Client) CreateSessionToken(ctx context.Context, id string, body SessionTokenCreate, opts ...RequestEditorFn) (*SessionToken, error) {
	r, err := c.Generated.CreateSessionTokenWithResponse(ctx, id, nil, body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON201)
}

// Calls.

// GetCall returns a call record (GET /v1/calls/{id}), with its transcript and metrics
// when an assistant handled it.
func (c *Client) GetCall(ctx context.Context, id string, opts ...RequestEditorFn) (*Call, error) {
	r, err := c.Generated.GetCallWithResponse(ctx, id, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// DeleteCall deletes the call's data for good and returns the record, redacted
// (DELETE /v1/calls/{id}); 409 call_in_progress while the call is live.
func (c *Client) DeleteCall(ctx context.Context, id string, opts ...RequestEditorFn) (*Call, error) {
	r, err := c.Generated.DeleteCallWithResponse(ctx, id, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// GetCallRecording returns a download URL of the call's recording, working for 15
// minutes (GET /v1/calls/{id}/recording); 404 recording_not_found when there is none
// to download.
func (c *Client) GetCallRecording(ctx context.Context, id string, opts ...RequestEditorFn) (*RecordingDownload, error) {
	r, err := c.Generated.GetCallRecordingWithResponse(ctx, id, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// RecordingDeleted is the answer of DeleteCallRecording: the call's id (the API answers
// 204 with no body).
type RecordingDeleted struct{ CallID string }

// DeleteCallRecording removes the call's recording for good (DELETE
// /v1/calls/{id}/recording); deleting a deleted one succeeds again.
func (c *Client) DeleteCallRecording(ctx context.Context, id string, opts ...RequestEditorFn) (*RecordingDeleted, error) {
	r, err := c.Generated.DeleteCallRecordingWithResponse(ctx, id, opts...)
	if err != nil {
		return nil, err
	}
	if err := Check(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return &RecordingDeleted{CallID: id}, nil
}

// UpdateCall changes a call's metadata (PATCH /v1/calls/{id}).
func (c *Client) UpdateCall(ctx context.Context, id string, body CallUpdate, opts ...RequestEditorFn) (*Call, error) {
	r, err := c.Generated.UpdateCallWithResponse(ctx, id, body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// ListCalls returns one page of the account's calls, newest first (GET /v1/calls);
// Calls walks every page.
func (c *Client) ListCalls(ctx context.Context, params *ListCallsParams, opts ...RequestEditorFn) (*CallList, error) {
	r, err := c.Generated.ListCallsWithResponse(ctx, params, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// GetUsage returns the account's usage per UTC day over a range of at most 92 days, and
// its total (GET /v1/usage).
func (c *Client) GetUsage(ctx context.Context, params *GetUsageParams, opts ...RequestEditorFn) (*UsageReport, error) {
	r, err := c.Generated.GetUsageWithResponse(ctx, params, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// GetAccount returns the account the key belongs to, with its branding (GET
// /v1/account).
func (c *Client) GetAccount(ctx context.Context, opts ...RequestEditorFn) (*Account, error) {
	r, err := c.Generated.GetAccountWithResponse(ctx, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// UpdateAccount changes the account's branding: name, brand colour, support URL, logo
// (the file's bytes in base64) (PATCH /v1/account).
func (c *Client) UpdateAccount(ctx context.Context, body AccountUpdate, opts ...RequestEditorFn) (*Account, error) {
	r, err := c.Generated.UpdateAccountWithResponse(ctx, body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// CallAnswer is what AnswerCall answers: Session when the call was accepted (the room's
// session payload, for your client), Call when it was declined or handed to the
// assistant (the call record with its decision). Exactly one is set.
type CallAnswer struct {
	Session *SessionPayload
	Call    *DecidedCall
}

// AnswerCall answers a ringing call on a customer_decides line, the API way (the other
// is the call.incoming webhook's response body): accept, decline, or assistant
// (POST /v1/calls/{id}/answer).
func (c *Client) AnswerCall(ctx context.Context, id string, body CallAnswerRequest, opts ...RequestEditorFn) (*CallAnswer, error) {
	r, err := c.Generated.AnswerCallWithResponse(ctx, id, nil, body, opts...)
	if err != nil {
		return nil, err
	}
	if r.JSON201 != nil {
		return &CallAnswer{Session: r.JSON201}, nil
	}
	d, err := answer(r.HTTPResponse, r.Body, r.JSON200)
	if err != nil {
		return nil, err
	}
	return &CallAnswer{Call: d}, nil
}

// Events.

// ListEvents returns one page of the account's events, newest first (GET /v1/events);
// Events walks every page, each event parsed as webhook.Parse parses a delivery.
func (c *Client) ListEvents(ctx context.Context, params *ListEventsParams, opts ...RequestEditorFn) (*EventList, error) {
	r, err := c.Generated.ListEventsWithResponse(ctx, params, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// GetEvent returns an event with a page of its delivery attempts (GET /v1/events/{id}):
// params' AttemptsLimit and AttemptsStartingAfter page them (nil: the first 20);
// has_more_attempts says another page follows.
func (c *Client) GetEvent(ctx context.Context, id string, params *GetEventParams, opts ...RequestEditorFn) (*EventWithAttempts, error) {
	r, err := c.Generated.GetEventWithResponse(ctx, id, params, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// RedeliverEvent sends an event again now, to every enabled endpoint subscribed to its
// type or to body.EndpointId only (POST /v1/events/{id}/redeliver).
func (c *Client) RedeliverEvent(ctx context.Context, id string, body EventRedeliver, opts ...RequestEditorFn) (*EventWithAttempts, error) {
	r, err := c.Generated.RedeliverEventWithResponse(ctx, id, nil, body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON202)
}

// Webhook endpoints.

// CreateWebhookEndpoint registers a URL for the account's events
// (POST /v1/webhook_endpoints). Its Secret, which webhook.Verify checks deliveries
// with, is in this answer only: keep it.
func (c *Client) CreateWebhookEndpoint(ctx context.Context, body WebhookEndpointCreate, opts ...RequestEditorFn) (*WebhookEndpointWithSecret, error) {
	r, err := c.Generated.CreateWebhookEndpointWithResponse(ctx, nil, body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON201)
}

// GetWebhookEndpoint returns an endpoint, never its secret
// (GET /v1/webhook_endpoints/{id}).
func (c *Client) GetWebhookEndpoint(ctx context.Context, id string, opts ...RequestEditorFn) (*WebhookEndpoint, error) {
	r, err := c.Generated.GetWebhookEndpointWithResponse(ctx, id, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// UpdateWebhookEndpoint changes an endpoint's url, events, description or status
// (PATCH /v1/webhook_endpoints/{id}).
func (c *Client) UpdateWebhookEndpoint(ctx context.Context, id string, body WebhookEndpointUpdate, opts ...RequestEditorFn) (*WebhookEndpoint, error) {
	r, err := c.Generated.UpdateWebhookEndpointWithResponse(ctx, id, body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// DeleteWebhookEndpoint deletes an endpoint; its pending deliveries stop
// (DELETE /v1/webhook_endpoints/{id}).
func (c *Client) DeleteWebhookEndpoint(ctx context.Context, id string, opts ...RequestEditorFn) (*DeletedWebhookEndpoint, error) {
	r, err := c.Generated.DeleteWebhookEndpointWithResponse(ctx, id, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// ListWebhookEndpoints returns one page of the account's endpoints, newest first
// (GET /v1/webhook_endpoints); WebhookEndpoints walks every page.
func (c *Client) ListWebhookEndpoints(ctx context.Context, params *ListWebhookEndpointsParams, opts ...RequestEditorFn) (*WebhookEndpointList, error) {
	r, err := c.Generated.ListWebhookEndpointsWithResponse(ctx, params, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// RotateWebhookEndpointSecret gives an endpoint a new secret, in this answer only; the
// old one keeps signing beside it for 24 h, so verify with both meanwhile
// (POST /v1/webhook_endpoints/{id}/rotate_secret).
func (c *Client) RotateWebhookEndpointSecret(ctx context.Context, id string, opts ...RequestEditorFn) (*WebhookEndpointWithSecret, error) {
	r, err := c.Generated.RotateWebhookEndpointSecretWithResponse(ctx, id, nil, EmptyObject{}, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// API keys.

// CreateApiKey creates another API key for the account (POST /v1/api_keys); its secret
// is in this answer only.
func (c *Client) CreateApiKey(ctx context.Context, opts ...RequestEditorFn) (*ApiKeyWithSecret, error) {
	r, err := c.Generated.CreateApiKeyWithResponse(ctx, nil, EmptyObject{}, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON201)
}

// ListApiKeys returns one page of the account's API keys, never their secrets
// (GET /v1/api_keys); ApiKeys walks every page.
func (c *Client) ListApiKeys(ctx context.Context, params *ListApiKeysParams, opts ...RequestEditorFn) (*ApiKeyList, error) {
	r, err := c.Generated.ListApiKeysWithResponse(ctx, params, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// RevokeApiKey revokes an API key at once (DELETE /v1/api_keys/{id}).
func (c *Client) RevokeApiKey(ctx context.Context, id string, opts ...RequestEditorFn) (*ApiKey, error) {
	r, err := c.Generated.RevokeApiKeyWithResponse(ctx, id, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// CreateLine adds one of the account's numbers as a SIP line on one of its trunks
// (POST /v1/lines with platform "sip").
func (c *Client) CreateLine(ctx context.Context, body LineCreate, opts ...RequestEditorFn) (*Line, error) {
	r, err := c.Generated.CreateLineWithResponse(ctx, nil, body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON201)
}

// DeleteLine removes a SIP line (DELETE /v1/lines/{id}); line_in_call while a call on it
// is live.
func (c *Client) DeleteLine(ctx context.Context, id string, opts ...RequestEditorFn) (*DeletedLine, error) {
	r, err := c.Generated.DeleteLineWithResponse(ctx, id, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// TransferCall hands a live call to a number or SIP URI (POST /v1/calls/{id}/transfer)
// and returns the call at once, its transfer pending; the outcome (completed, the call
// ended as transferred, or failed, the call going on) lands in the record (GetCall).
func (c *Client) TransferCall(ctx context.Context, id string, body CallTransferRequest, opts ...RequestEditorFn) (*Call, error) {
	r, err := c.Generated.TransferCallWithResponse(ctx, id, nil, body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON202)
}

// CreateSipTrunk connects a SIP provider to the account (POST /v1/sip_trunks); its
// passwords are never shown again.
func (c *Client) CreateSipTrunk(ctx context.Context, body SipTrunkCreate, opts ...RequestEditorFn) (*SipTrunk, error) {
	r, err := c.Generated.CreateSipTrunkWithResponse(ctx, nil, body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON201)
}

// GetSipTrunk returns a trunk (GET /v1/sip_trunks/{id}).
func (c *Client) GetSipTrunk(ctx context.Context, id string, opts ...RequestEditorFn) (*SipTrunk, error) {
	r, err := c.Generated.GetSipTrunkWithResponse(ctx, id, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// UpdateSipTrunk changes a trunk (PATCH /v1/sip_trunks/{id}).
func (c *Client) UpdateSipTrunk(ctx context.Context, id string, body SipTrunkUpdate, opts ...RequestEditorFn) (*SipTrunk, error) {
	r, err := c.Generated.UpdateSipTrunkWithResponse(ctx, id, body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// DeleteSipTrunk removes a trunk no line uses (DELETE /v1/sip_trunks/{id}).
func (c *Client) DeleteSipTrunk(ctx context.Context, id string, opts ...RequestEditorFn) (*DeletedSipTrunk, error) {
	r, err := c.Generated.DeleteSipTrunkWithResponse(ctx, id, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// ListSipTrunks returns one page of the account's trunks, newest first
// (GET /v1/sip_trunks); SipTrunks walks every page.
func (c *Client) ListSipTrunks(ctx context.Context, params *ListSipTrunksParams, opts ...RequestEditorFn) (*SipTrunkList, error) {
	r, err := c.Generated.ListSipTrunksWithResponse(ctx, params, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// CreateCampaign makes a draft campaign (POST /v1/campaigns).
func (c *Client) CreateCampaign(ctx context.Context, body CampaignCreate, opts ...RequestEditorFn) (*Campaign, error) {
	r, err := c.Generated.CreateCampaignWithResponse(ctx, nil, body, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON201)
}

// ListCampaigns lists the account's campaigns, newest first (GET /v1/campaigns).
func (c *Client) ListCampaigns(ctx context.Context, params *ListCampaignsParams, opts ...RequestEditorFn) (*CampaignList, error) {
	r, err := c.Generated.ListCampaignsWithResponse(ctx, params, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// GetCampaign returns a campaign with its counts (GET /v1/campaigns/{id}).
func (c *Client) GetCampaign(ctx context.Context, id string, opts ...RequestEditorFn) (*Campaign, error) {
	r, err := c.Generated.GetCampaignWithResponse(ctx, id, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// ListCampaignRecipients pages a campaign's recipients in list order
// (GET /v1/campaigns/{id}/recipients).
func (c *Client) ListCampaignRecipients(ctx context.Context, id string, params *ListCampaignRecipientsParams, opts ...RequestEditorFn) (*CampaignRecipientList, error) {
	r, err := c.Generated.ListCampaignRecipientsWithResponse(ctx, id, params, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// GetCampaignReport reports on a campaign's calls so far: outcomes, connect rate,
// average length, voicemails left, usage, per hour (GET /v1/campaigns/{id}/report).
func (c *Client) GetCampaignReport(ctx context.Context, id string, opts ...RequestEditorFn) (*CampaignReport, error) {
	r, err := c.Generated.GetCampaignReportWithResponse(ctx, id, nil, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// CampaignResultsCSV downloads a campaign's per-recipient results as CSV, a header
// row first (GET /v1/campaigns/{id}/report?format=csv).
func (c *Client) CampaignResultsCSV(ctx context.Context, id string, opts ...RequestEditorFn) ([]byte, error) {
	format := Csv
	r, err := c.Generated.GetCampaignReportWithResponse(ctx, id, &GetCampaignReportParams{Format: &format}, opts...)
	if err != nil {
		return nil, err
	}
	if err := Check(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return r.Body, nil
}

// AddCampaignRecipients uploads a file of recipients to a draft campaign (POST
// /v1/campaigns/{id}/recipients): contentType is "text/csv" (a header row first) or
// "application/x-ndjson" (JSON Lines).
func (c *Client) AddCampaignRecipients(ctx context.Context, id, contentType string, file io.Reader, opts ...RequestEditorFn) (*Campaign, error) {
	r, err := c.Generated.AddCampaignRecipientsWithBodyWithResponse(ctx, id, nil, contentType, file, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// StartCampaign starts a draft campaign (POST /v1/campaigns/{id}/start).
func (c *Client) StartCampaign(ctx context.Context, id string, opts ...RequestEditorFn) (*Campaign, error) {
	r, err := c.Generated.StartCampaignWithResponse(ctx, id, nil, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// PauseCampaign pauses a running campaign (POST /v1/campaigns/{id}/pause).
func (c *Client) PauseCampaign(ctx context.Context, id string, opts ...RequestEditorFn) (*Campaign, error) {
	r, err := c.Generated.PauseCampaignWithResponse(ctx, id, nil, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// ResumeCampaign runs a paused campaign again (POST /v1/campaigns/{id}/resume).
func (c *Client) ResumeCampaign(ctx context.Context, id string, opts ...RequestEditorFn) (*Campaign, error) {
	r, err := c.Generated.ResumeCampaignWithResponse(ctx, id, nil, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}

// CancelCampaign cancels a campaign (POST /v1/campaigns/{id}/cancel).
func (c *Client) CancelCampaign(ctx context.Context, id string, opts ...RequestEditorFn) (*Campaign, error) {
	r, err := c.Generated.CancelCampaignWithResponse(ctx, id, nil, opts...)
	if err != nil {
		return nil, err
	}
	return answer(r.HTTPResponse, r.Body, r.JSON200)
}
