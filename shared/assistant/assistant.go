// Package assistant holds assistants: an editable draft, immutable numbered versions, the
// active version a line's next call uses, and the rules for publishing, activating,
// duplicating and archiving. The avatars a draft may name are persona.Avatars.
package assistant

import (
	"context"
	"time"

	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/metadata"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/variables"
)

// Statuses.
const (
	StatusActive   = "active"
	StatusArchived = "archived"
)

// ObjectVersions is how many versions, the newest, the assistant object carries. A
// version holds up to ~22,000 characters of prompt and greeting, so every version inline
// made an assistant with 80 publishes 6.5 MB, over Lambda's 6 MB response limit; ten
// keep the object under about 1.5 MB at the field limits. GET
// /v1/assistants/{id}/versions pages through all of them.
const ObjectVersions = 10

// NewestVersions returns the newest n versions of a, oldest first like a.Versions.
func (a Assistant) NewestVersions(n int) []Version {
	return a.Versions[max(len(a.Versions)-n, 0):]
}

// Draft is the editable working copy.
type Draft struct {
	SystemPrompt string          `json:"system_prompt"`
	Greeting     string          `json:"greeting"`
	AvatarID     string          `json:"avatar_id"`
	Framing      persona.Framing `json:"framing"`
	// Voice is a voice id of the deployment's catalogue (GET /v1/voices); empty means the
	// avatar's default voice.
	Voice string `json:"voice"`
	// Model names the language model the persona uses, overriding the fleet's LLM_MODEL;
	// empty means the fleet's default.
	Model string `json:"model"`
	// Language is the BCP-47 tag the assistant hears and speaks (language.go); empty
	// (drafts written before it existed) is persona.DefaultLanguage.
	Language string `json:"language,omitempty"`
	// TransferDestinations are where the assistant may transfer a SIP call (its
	// transfer_call tool), each with a description the model reads.
	TransferDestinations []persona.TransferDestination `json:"transfer_destinations"`
	// CallSettings: tools, idle timeout, maximum duration (tools.go).
	CallSettings
	// Recording is RecordingOff or RecordingAudio (recording.go); empty is off.
	Recording string `json:"recording,omitempty"`
}

// Version is an immutable published snapshot.
type Version struct {
	ID           string          `json:"id"`
	AssistantID  string          `json:"assistant_id"`
	Number       int             `json:"number"`
	PublishedAt  time.Time       `json:"published_at"`
	Name         string          `json:"name"`
	SystemPrompt string          `json:"system_prompt"`
	Greeting     string          `json:"greeting"`
	AvatarID     string          `json:"avatar_id"`
	Framing      persona.Framing `json:"framing"`
	Voice        string          `json:"voice"`
	Model        string          `json:"model"`
	// Language is the draft's, as published; empty (versions published before it
	// existed) is persona.DefaultLanguage.
	Language string `json:"language,omitempty"`
	// TransferDestinations are the draft's, fixed at publish.
	TransferDestinations []persona.TransferDestination `json:"transfer_destinations,omitempty"`
	// Variables are the names of the {{name}} placeholders the greeting and the system
	// prompt use, sorted (shared/variables). Versions published before variables existed
	// have none stored: VariableNames reads them from the text.
	Variables []string `json:"variables,omitempty"`
	// CallSettings are the draft's, as published (tools.go).
	CallSettings
	// Recording is the draft's, as published (recording.go); empty is off.
	Recording string `json:"recording,omitempty"`
}

// VariableNames are the names of the placeholders the version uses, sorted; never nil.
func (v Version) VariableNames() []string {
	if v.Variables != nil {
		return v.Variables
	}
	if names := variables.Names(v.Greeting, v.SystemPrompt); names != nil {
		return names
	}
	return []string{}
}

// Assistant is the stored record. Versions are kept oldest first.
type Assistant struct {
	ID              string    `json:"id"`
	AccountID       string    `json:"account_id"`
	Name            string    `json:"name"`
	Status          string    `json:"status"`
	Draft           Draft     `json:"draft"`
	Versions        []Version `json:"versions"`
	ActiveVersionID string    `json:"active_version_id"`
	// VersionCount is the number of the latest version; the next publish takes +1.
	VersionCount int `json:"version_count"`
	// AssignedLines counts lines assigned to this assistant; archive needs it at zero.
	AssignedLines int `json:"assigned_lines"`
	// Metadata is the customer's key-value pairs (shared/metadata); not part of the
	// draft or of any version.
	Metadata metadata.Metadata `json:"metadata,omitempty"`
	// ToolSecret signs the requests to the assistant's tools (toolsecret.go).
	ToolSecret
	// Revision increases on every write; writes are conditional on the revision read.
	Revision  int64     `json:"revision"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ActiveVersion returns the version the next call uses.
func (a Assistant) ActiveVersion() (Version, bool) {
	for _, v := range a.Versions {
		if v.ID == a.ActiveVersionID {
			return v, true
		}
	}
	return Version{}, false
}

// ListQuery filters a list: Status is active, archived or all.
type ListQuery struct {
	listing.Query
	Status string
}

// Store keeps assistants and their versions.
//
// Errors: GetAssistant and GetVersion return apierr.ErrNotFound. Update and Publish are
// conditional on the Revision of the assistant passed in (the one the caller read) and
// return apierr.ErrConflict when it changed; CreateAssistant returns ErrConflict when the
// id exists. Publish also fails with ErrConflict if the version's number is taken.
type Store interface {
	CreateAssistant(ctx context.Context, a Assistant) error
	// GetAssistant returns the assistant with its versions, oldest first.
	GetAssistant(ctx context.Context, id string) (Assistant, error)
	// GetAssistantHead returns the assistant without its versions (Versions nil): one
	// read however many versions it has, for what needs one version (CallVersion, on
	// every call).
	GetAssistantHead(ctx context.Context, id string) (Assistant, error)
	// ListAssistants returns up to Limit+1 assistants of the account, newest first.
	ListAssistants(ctx context.Context, accountID string, q ListQuery) ([]Assistant, error)
	// UpdateAssistant writes a (without its versions) if the stored revision is
	// a.Revision, and stores a.Revision+1.
	UpdateAssistant(ctx context.Context, a Assistant) error
	// PublishVersion adds v and writes a (whose VersionCount and ActiveVersionID already
	// name v) in one transaction, under the same revision condition as UpdateAssistant.
	PublishVersion(ctx context.Context, a Assistant, v Version) error
	GetVersion(ctx context.Context, id string) (Version, error)
}
