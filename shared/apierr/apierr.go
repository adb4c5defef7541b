// Package apierr holds Bridgeline's domain errors. Each failure a client can see has a
// stable snake_case code; one table maps codes to HTTP statuses and error types. Anything
// that is not an *Error is internal and reaches a client only as "internal error".
package apierr

import (
	"errors"
	"fmt"
	"net/http"
)

// Codes. The list is the contract of openapi.yaml's Error schema.
const (
	CodeParameterMissing      = "parameter_missing"
	CodeParameterInvalid      = "parameter_invalid"
	CodeParameterUnknown      = "parameter_unknown"
	CodeInvalidJSON           = "invalid_json"
	CodeBodyTooLarge          = "body_too_large"
	CodeUnsupportedMediaType  = "unsupported_media_type"
	CodeResourceNotFound      = "resource_not_found"
	CodeRouteNotFound         = "route_not_found"
	CodeMethodNotAllowed      = "method_not_allowed"
	CodeAssistantArchived     = "assistant_archived"
	CodeAssistantNotPublished = "assistant_not_published"
	CodeAssistantInUse        = "assistant_in_use"
	CodeDraftIncomplete       = "draft_incomplete"
	CodeSessionEnded          = "session_ended"
	CodeCallAlreadyAnswered   = "call_already_answered"
	CodeCallNotAnswerable     = "call_not_answerable"
	// CodeConflict is the stores' "the row changed or exists" and the operator's
	// already-provisioned line: never a customer-facing code (openapi.yaml does not list
	// it); each customer-facing 409 has its own code below.
	CodeConflict                = "conflict"
	CodeWebhookEndpointLimit    = "webhook_endpoint_limit_reached"
	CodeWebhookEndpointDisabled = "webhook_endpoint_disabled"
	CodeEventNotRedeliverable   = "event_not_redeliverable"
	CodeNoSubscribedEndpoint    = "no_subscribed_endpoint"
	CodeNoLine                  = "no_line"
	CodeAPIKeyMissing           = "api_key_missing"
	CodeAPIKeyInvalid           = "api_key_invalid"
	CodeLastAPIKey              = "last_api_key"
	CodeAPIKeyLimit             = "api_key_limit_reached"
	CodeRateLimited             = "rate_limited"
	CodeIdempotencyKeyReused    = "idempotency_key_reused"
	CodeIdempotencyKeyInUse     = "idempotency_key_in_use"
	CodeIdempotencyKeyInvalid   = "idempotency_key_invalid"
	CodeUpstreamUnavailable     = "upstream_unavailable"
	CodeURLNotAllowed           = "url_not_allowed"
	// CodeConcurrentSessionLimit: the account has as many live sessions as its limit
	// allows (MAX_CONCURRENT_SESSIONS, or its own); one must end before another starts.
	CodeConcurrentSessionLimit = "concurrent_session_limit"
	// CodeLiveKeyRequired: an sk_test_ key asked for a call on a real calling platform;
	// test keys place calls only through the sim.
	CodeLiveKeyRequired = "live_key_required"
	CodeInternal        = "internal_error"

	// SIP trunks and lines, and transfers.
	// CodeTrunkInUse: a trunk with lines on it cannot be deleted.
	CodeTrunkInUse = "trunk_in_use"
	// CodeTrunkLineLimit: the trunk carries as many lines as one may.
	CodeTrunkLineLimit = "trunk_line_limit_reached"
	// CodeTrunkNoOutbound: a line whose trunk has no outbound side places no call.
	CodeTrunkNoOutbound = "trunk_has_no_outbound"
	// CodeOutboundPassword: a trunk's outbound address or transport changes without its
	// password: the stored one is not sent to a new destination.
	CodeOutboundPassword = "outbound_password_required"
	// CodeHandleTaken: the number is a line already (of this account or another).
	CodeHandleTaken = "handle_taken"
	// CodeLineInCall: a line with a call ringing or in progress cannot be deleted.
	CodeLineInCall = "line_in_call"
	// CodeLineNotDeletable: sim lines are the operator's.
	CodeLineNotDeletable = "line_not_deletable"
	// CodeTransferNotSupported: the call's platform cannot hand a call on (the sim).
	CodeTransferNotSupported = "transfer_not_supported"
	// CodeCallNotActive: the call is not in progress (ringing, or over).
	CodeCallNotActive = "call_not_active"
	// CodeTransferFailed: the destination refused or did not answer; the call goes on.
	CodeTransferFailed = "transfer_failed"
	// CodeRecordingNotFound: the call has no recording to hand out or delete (none, not
	// stored yet, failed, deleted), or is not a call of this account.
	CodeRecordingNotFound = "recording_not_found"
	// CodeDestinationNotAllowed: a dial or transfer to a real network that the
	// destination policy refuses (shared/destination): a country the line may not call, a
	// premium-rate or shared-cost range, or the account's daily outbound minutes used up.
	CodeDestinationNotAllowed = "destination_not_allowed"
	// CodeCallInProgress: the call is live, or its assistant's final report or analysis
	// is still awaited: its data cannot be deleted yet.
	CodeCallInProgress = "call_in_progress"
	// CodeCampaignState: a campaign's lifecycle step its status does not allow (start a
	// running campaign, resume a draft).
	CodeCampaignState = "campaign_state_invalid"
	// CodeAvatarInUse: a published assistant version uses the avatar: it cannot be deleted.
	CodeAvatarInUse = "avatar_in_use"
	// CodeAvatarLimit: the account has as many avatars of its own as it may.
	CodeAvatarLimit = "avatar_limit_reached"
	// CodeModelLacksVision: a draft with vision names a model the deployment does not
	// say accepts images (LLM_VISION_MODELS), or none: it cannot be published.
	CodeModelLacksVision = "model_lacks_vision"
	// CodeLanguageNotSupported: a version's language is one the deployment does not
	// serve (no recogniser hears it, or no voice speaks it); the message names those it
	// serves.
	CodeLanguageNotSupported = "language_not_supported"
)

// Error types, as API.md names them.
const (
	TypeInvalidRequest = "invalid_request_error"
	TypeAuthentication = "authentication_error"
	TypeRateLimit      = "rate_limit_error"
	TypeIdempotency    = "idempotency_error"
	TypeUpstream       = "upstream_error"
	TypeAPI            = "api_error"
)

type kind struct {
	status int
	typ    string
}

var table = map[string]kind{
	CodeParameterMissing:        {http.StatusBadRequest, TypeInvalidRequest},
	CodeParameterInvalid:        {http.StatusBadRequest, TypeInvalidRequest},
	CodeParameterUnknown:        {http.StatusBadRequest, TypeInvalidRequest},
	CodeInvalidJSON:             {http.StatusBadRequest, TypeInvalidRequest},
	CodeBodyTooLarge:            {http.StatusRequestEntityTooLarge, TypeInvalidRequest},
	CodeUnsupportedMediaType:    {http.StatusUnsupportedMediaType, TypeInvalidRequest},
	CodeResourceNotFound:        {http.StatusNotFound, TypeInvalidRequest},
	CodeRouteNotFound:           {http.StatusNotFound, TypeInvalidRequest},
	CodeMethodNotAllowed:        {http.StatusMethodNotAllowed, TypeInvalidRequest},
	CodeAssistantArchived:       {http.StatusConflict, TypeInvalidRequest},
	CodeAssistantNotPublished:   {http.StatusConflict, TypeInvalidRequest},
	CodeAssistantInUse:          {http.StatusConflict, TypeInvalidRequest},
	CodeDraftIncomplete:         {http.StatusUnprocessableEntity, TypeInvalidRequest},
	CodeSessionEnded:            {http.StatusConflict, TypeInvalidRequest},
	CodeCallAlreadyAnswered:     {http.StatusConflict, TypeInvalidRequest},
	CodeCallNotAnswerable:       {http.StatusConflict, TypeInvalidRequest},
	CodeConflict:                {http.StatusConflict, TypeInvalidRequest},
	CodeWebhookEndpointLimit:    {http.StatusConflict, TypeInvalidRequest},
	CodeWebhookEndpointDisabled: {http.StatusConflict, TypeInvalidRequest},
	CodeEventNotRedeliverable:   {http.StatusConflict, TypeInvalidRequest},
	CodeNoSubscribedEndpoint:    {http.StatusConflict, TypeInvalidRequest},
	CodeNoLine:                  {http.StatusUnprocessableEntity, TypeInvalidRequest},
	CodeAPIKeyMissing:           {http.StatusUnauthorized, TypeAuthentication},
	CodeAPIKeyInvalid:           {http.StatusUnauthorized, TypeAuthentication},
	CodeLastAPIKey:              {http.StatusConflict, TypeInvalidRequest},
	CodeAPIKeyLimit:             {http.StatusConflict, TypeInvalidRequest},
	CodeRateLimited:             {http.StatusTooManyRequests, TypeRateLimit},
	CodeIdempotencyKeyReused:    {http.StatusUnprocessableEntity, TypeIdempotency},
	CodeIdempotencyKeyInUse:     {http.StatusConflict, TypeIdempotency},
	CodeIdempotencyKeyInvalid:   {http.StatusBadRequest, TypeIdempotency},
	CodeUpstreamUnavailable:     {http.StatusBadGateway, TypeUpstream},
	CodeURLNotAllowed:           {http.StatusBadRequest, TypeInvalidRequest},
	CodeConcurrentSessionLimit:  {http.StatusTooManyRequests, TypeRateLimit},
	CodeLiveKeyRequired:         {http.StatusForbidden, TypeInvalidRequest},
	CodeInternal:                {http.StatusInternalServerError, TypeAPI},
	CodeTrunkInUse:              {http.StatusConflict, TypeInvalidRequest},
	CodeTrunkLineLimit:          {http.StatusConflict, TypeInvalidRequest},
	CodeTrunkNoOutbound:         {http.StatusConflict, TypeInvalidRequest},
	CodeHandleTaken:             {http.StatusConflict, TypeInvalidRequest},
	CodeOutboundPassword:        {http.StatusBadRequest, TypeInvalidRequest},
	CodeLineInCall:              {http.StatusConflict, TypeInvalidRequest},
	CodeLineNotDeletable:        {http.StatusConflict, TypeInvalidRequest},
	CodeTransferNotSupported:    {http.StatusConflict, TypeInvalidRequest},
	CodeCallNotActive:           {http.StatusConflict, TypeInvalidRequest},
	CodeTransferFailed:          {http.StatusConflict, TypeInvalidRequest},
	CodeRecordingNotFound:       {http.StatusNotFound, TypeInvalidRequest},
	CodeDestinationNotAllowed:   {http.StatusForbidden, TypeInvalidRequest},
	CodeCallInProgress:          {http.StatusConflict, TypeInvalidRequest},
	CodeCampaignState:           {http.StatusConflict, TypeInvalidRequest},
	CodeAvatarInUse:             {http.StatusConflict, TypeInvalidRequest},
	CodeAvatarLimit:             {http.StatusConflict, TypeInvalidRequest},
	CodeModelLacksVision:        {http.StatusBadRequest, TypeInvalidRequest},
	CodeLanguageNotSupported:    {http.StatusBadRequest, TypeInvalidRequest},
}

// Error is a failure a client may see: its Message must hold nothing internal.
type Error struct {
	Code    string
	Message string
	Param   string
}

func (e *Error) Error() string {
	if e.Param != "" {
		return fmt.Sprintf("%s (%s): %s", e.Code, e.Param, e.Message)
	}
	return e.Code + ": " + e.Message
}

// Status is the HTTP status for the error's code.
func (e *Error) Status() int { return lookup(e.Code).status }

// Type is the API.md error type for the error's code.
func (e *Error) Type() string { return lookup(e.Code).typ }

func lookup(code string) kind {
	if k, ok := table[code]; ok {
		return k
	}
	return table[CodeInternal]
}

// New makes an error with a code and a client-safe message.
func New(code, message string) *Error { return &Error{Code: code, Message: message} }

// Param makes an error about one request parameter.
func Param(code, param, message string) *Error {
	return &Error{Code: code, Message: message, Param: param}
}

// Invalid is the usual bad-value error for a parameter.
func Invalid(param, message string) *Error { return Param(CodeParameterInvalid, param, message) }

// Missing is the error for a required parameter that is absent.
func Missing(param string) *Error {
	return Param(CodeParameterMissing, param, param+" is required")
}

// NotFound is the error for an id that does not exist or belongs to another account.
func NotFound(resource, id string) *Error {
	return &Error{Code: CodeResourceNotFound, Message: fmt.Sprintf("no such %s: %q", resource, id), Param: "id"}
}

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// Is reports whether err carries the given code.
func Is(err error, code string) bool {
	e, ok := As(err)
	return ok && e.Code == code
}

// Owned is a store read as one account sees it: a record that is absent, or that belongs
// to another account (owner is the record's account), is the same notFound error, so an
// id never confirms that it exists elsewhere. Any other read failure is wrapped and
// returned as it is.
func Owned[T any](v T, owner string, err error, accountID string, notFound *Error) (T, error) {
	var zero T
	if errors.Is(err, ErrNotFound) || (err == nil && owner != accountID) {
		return zero, notFound
	}
	if err != nil {
		return zero, fmt.Errorf("read %T: %w", v, err)
	}
	return v, nil
}

// ErrNotFound is what stores return when a record is absent; services turn it into a
// NotFound error naming the resource.
var ErrNotFound = errors.New("not found")

// ErrConflict is what stores return when a conditional write lost: the record changed
// since it was read, or already exists.
var ErrConflict = errors.New("conditional write failed")
