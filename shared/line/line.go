// Package line holds lines: the numbers or handles calls arrive on, provisioned by the
// operator, with the inbound behaviour the customer sets and the assistant assigned.
package line

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/destination"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/metadata"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/retry"
	"github.com/bridgeline/bridgeline/shared/variables"
)

// Inbound modes.
const (
	ModeAssistant       = "assistant"
	ModeCustomerDecides = "customer_decides"
	ModeDisabled        = "disabled"
)

// What happens when a customer_decides line gets no answer in time.
const (
	TimeoutDecline   = "decline"
	TimeoutAssistant = "assistant"
)

// Bounds of decision_timeout_seconds.
const (
	DefaultDecisionTimeout = 10
	MinDecisionTimeout     = 1
	MaxDecisionTimeout     = 30
)

// Line is the stored record.
type Line struct {
	ID          string `json:"id"`
	AccountID   string `json:"account_id"`
	Handle      string `json:"handle"`
	Platform    string `json:"platform"`
	Name        string `json:"name"`
	InboundMode string `json:"inbound_mode"`
	AssistantID string `json:"assistant_id"`
	// VersionID pins a version of the assistant for the line's calls; empty means the
	// assistant's active version at each call.
	VersionID              string    `json:"version_id,omitempty"`
	DecisionTimeoutSeconds int       `json:"decision_timeout_seconds"`
	OnDecisionTimeout      string    `json:"on_decision_timeout"`
	Revision               int64     `json:"revision"`
	CreatedAt              time.Time `json:"created_at"`
	UpdatedAt              time.Time `json:"updated_at"`
	// Metadata is the customer's key-value pairs (shared/metadata).
	Metadata metadata.Metadata `json:"metadata,omitempty"`

	// Variables are the line's defaults for the assistant's {{name}} placeholders: a
	// call's own values (a session's or a call.incoming answer's) win over them.
	Variables map[string]string `json:"variables,omitempty"`

	// SIPTrunkID is the trunk a SIP line's number is on (shared/siptrunk); empty for a
	// sim line.
	SIPTrunkID string `json:"sip_trunk_id,omitempty"`

	// AllowedDestinationCountries are the ISO 3166-1 alpha-2 codes of the countries the
	// line may dial and transfer to (shared/destination); nil: its account's list, else
	// the country of its own number. Empty (not nil) allows none.
	AllowedDestinationCountries []string `json:"allowed_destination_countries"`
}

// AssistantChange moves a line's assignment. From and To are assistant ids ("" for none);
// ToRevision is the revision of To that the caller checked, so an assignment cannot race
// an archive of the same assistant.
type AssistantChange struct {
	From       string
	To         string
	ToRevision int64
}

// Store keeps lines.
//
// Errors: GetLine and LineByHandle return apierr.ErrNotFound. CreateLine returns
// apierr.ErrConflict when the platform and handle are taken. UpdateLine is conditional on
// l.Revision (and, with a change, on the To assistant's revision) and returns
// apierr.ErrConflict when either moved; it also counts the assignment on both assistants
// (assistant.Assistant.AssignedLines) in the same transaction.
type Store interface {
	CreateLine(ctx context.Context, l Line) error
	GetLine(ctx context.Context, id string) (Line, error)
	LineByHandle(ctx context.Context, platform, handle string) (Line, error)
	// ListLines returns up to Limit+1 lines of the account, newest first.
	ListLines(ctx context.Context, accountID string, q listing.Query) ([]Line, error)
	// FirstLine returns the account's oldest line (a session's default caller line), in
	// one read however many lines the account has; apierr.ErrNotFound when it has none.
	FirstLine(ctx context.Context, accountID string) (Line, error)
	UpdateLine(ctx context.Context, l Line, change *AssistantChange) error
}

// Update is a PATCH: nil fields are left alone; UnassignAssistant clears the assistant.
type Update struct {
	Name                   *string
	InboundMode            *string
	DecisionTimeoutSeconds *int
	OnDecisionTimeout      *string
	AssistantID            *string
	UnassignAssistant      bool
	// VersionID pins a version of the line's assistant; UnpinVersion clears the pin.
	VersionID    *string
	UnpinVersion bool
	Metadata     *metadata.Patch
	// Variables replaces the line's default variables when not nil (empty clears them).
	Variables *map[string]string
	// AllowedDestinationCountries replaces the line's list when not nil;
	// DefaultDestinationCountries clears it (back to the account's or its own country).
	AllowedDestinationCountries *[]string
	DefaultDestinationCountries bool
}

// Service applies the line rules.
type Service struct {
	Store      Store
	Assistants assistant.Store
	Now        func() time.Time
}

// Provision adds a line for an account (operator only).
func (s *Service) Provision(ctx context.Context, accountID, platform, handle, name string) (Line, error) {
	if strings.TrimSpace(handle) == "" {
		return Line{}, apierr.Missing("handle")
	}
	if platform == "" {
		platform = sim.Name
	}
	now := s.now()
	l := Line{
		ID: ident.New("line"), AccountID: accountID, Handle: handle, Platform: platform, Name: name,
		InboundMode: ModeAssistant, DecisionTimeoutSeconds: DefaultDecisionTimeout,
		OnDecisionTimeout: TimeoutDecline, Revision: 1, CreatedAt: now, UpdatedAt: now,
	}
	if err := s.Store.CreateLine(ctx, l); err != nil {
		if errors.Is(err, apierr.ErrConflict) {
			return Line{}, apierr.Param(apierr.CodeConflict, "handle", fmt.Sprintf("%s handle %q is already provisioned", platform, handle))
		}
		return Line{}, fmt.Errorf("provision line: %w", err)
	}
	return l, nil
}

// Get returns the account's line, or not-found for any other id.
func (s *Service) Get(ctx context.Context, accountID, id string) (Line, error) {
	l, err := s.Store.GetLine(ctx, id)
	return apierr.Owned(l, l.AccountID, err, accountID, apierr.NotFound("line", id))
}

// List returns a page of the account's lines, newest first.
func (s *Service) List(ctx context.Context, accountID string, q listing.Query) ([]Line, error) {
	return s.Store.ListLines(ctx, accountID, q)
}

// Assign puts an active assistant with a published version on the line.
func (s *Service) Assign(ctx context.Context, accountID, id, assistantID string) (Line, error) {
	if assistantID == "" {
		return Line{}, apierr.Missing("assistant_id")
	}
	return s.Update(ctx, accountID, id, Update{AssistantID: &assistantID})
}

// Update applies a PATCH, conditionally, reading again when another write got there first.
func (s *Service) Update(ctx context.Context, accountID, id string, u Update) (Line, error) {
	if err := u.validate(); err != nil {
		return Line{}, err
	}
	var out Line
	err := retry.OnConflict(func() error {
		l, err := s.Get(ctx, accountID, id)
		if err != nil {
			return err
		}
		change, err := s.prepare(ctx, accountID, &l, u)
		if err != nil {
			return err
		}
		l.UpdatedAt = s.now()
		if err := s.Store.UpdateLine(ctx, l, change); err != nil {
			return fmt.Errorf("update line %s: %w", id, err)
		}
		l.Revision++
		out = l
		return nil
	})
	return out, err
}

// New is a line the account adds itself (a SIP line, POST /v1/lines): a fresh line on
// platform with handle and the defaults, with u applied as Update applies it (the
// assistant must be runnable, a pin must name one of its versions). It returns the line
// and the assignment change to write with it; the caller stores both.
func (s *Service) New(ctx context.Context, accountID, platform, handle string, u Update) (Line, *AssistantChange, error) {
	if u.UnassignAssistant || u.UnpinVersion {
		return Line{}, nil, apierr.Invalid("assistant_id", "a new line has no assistant or pin to remove: leave assistant_id and version_id out")
	}
	if err := u.validate(); err != nil {
		return Line{}, nil, err
	}
	now := s.now()
	l := Line{
		ID: ident.New("line"), AccountID: accountID, Handle: handle, Platform: platform,
		InboundMode: ModeAssistant, DecisionTimeoutSeconds: DefaultDecisionTimeout,
		OnDecisionTimeout: TimeoutDecline, Revision: 1, CreatedAt: now, UpdatedAt: now,
	}
	change, err := s.prepare(ctx, accountID, &l, u)
	if err != nil {
		return Line{}, nil, err
	}
	return l, change, nil
}

// prepare lays a validated update on l and returns the assignment change it makes: the
// assistant it assigns must be runnable, and a pin must name one of its versions.
func (s *Service) prepare(ctx context.Context, accountID string, l *Line, u Update) (*AssistantChange, error) {
	var change *AssistantChange
	var to *assistant.Assistant
	switch {
	case u.UnassignAssistant && l.AssistantID != "":
		change = &AssistantChange{From: l.AssistantID}
	case u.AssistantID != nil:
		a, err := assistant.Runnable(ctx, s.Assistants, accountID, *u.AssistantID)
		if err != nil {
			return nil, err
		}
		change = &AssistantChange{From: l.AssistantID, To: a.ID, ToRevision: a.Revision}
		to = &a
	}
	if err := u.apply(l); err != nil {
		return nil, err
	}
	if change != nil {
		l.AssistantID = change.To
	}
	if err := s.pinVersion(ctx, accountID, l, u, to); err != nil {
		return nil, err
	}
	return change, nil
}

func (s *Service) now() time.Time { return s.Now().UTC().Truncate(time.Millisecond) }

func (u Update) validate() error {
	if u.Name != nil {
		if utf8.RuneCountInString(*u.Name) > 200 || !utf8.ValidString(*u.Name) {
			return apierr.Invalid("name", "name must be valid UTF-8 of at most 200 characters")
		}
	}
	if u.InboundMode != nil {
		switch *u.InboundMode {
		case ModeAssistant, ModeCustomerDecides, ModeDisabled:
		default:
			return apierr.Invalid("inbound_mode", "inbound_mode must be assistant, customer_decides or disabled")
		}
	}
	if u.DecisionTimeoutSeconds != nil {
		if n := *u.DecisionTimeoutSeconds; n < MinDecisionTimeout || n > MaxDecisionTimeout {
			return apierr.Invalid("decision_timeout_seconds",
				fmt.Sprintf("decision_timeout_seconds must be between %d and %d", MinDecisionTimeout, MaxDecisionTimeout))
		}
	}
	if u.OnDecisionTimeout != nil {
		switch *u.OnDecisionTimeout {
		case TimeoutDecline, TimeoutAssistant:
		default:
			return apierr.Invalid("on_decision_timeout", "on_decision_timeout must be decline or assistant")
		}
	}
	if u.Variables != nil {
		if err := variables.CheckValues("variables", *u.Variables); err != nil {
			return err
		}
	}
	if u.AssistantID != nil && *u.AssistantID == "" {
		return apierr.Invalid("assistant_id", "assistant_id must be an assistant id, or null to unassign")
	}
	if u.VersionID != nil && *u.VersionID == "" {
		return apierr.Invalid("version_id", "version_id must be a version id, or null to unpin")
	}
	if u.VersionID != nil && u.UnassignAssistant {
		return apierr.Invalid("version_id", "version_id cannot be pinned while assistant_id is unassigned")
	}
	if u.AllowedDestinationCountries != nil {
		if _, err := destination.ParseCountries("allowed_destination_countries", *u.AllowedDestinationCountries); err != nil {
			return err
		}
	}
	if u.Metadata != nil {
		return u.Metadata.Validate()
	}
	return nil
}

// apply lays a validated update on l; only the metadata's count can still fail, against
// the metadata l holds.
func (u Update) apply(l *Line) error {
	if u.Name != nil {
		l.Name = *u.Name
	}
	if u.InboundMode != nil {
		l.InboundMode = *u.InboundMode
	}
	if u.DecisionTimeoutSeconds != nil {
		l.DecisionTimeoutSeconds = *u.DecisionTimeoutSeconds
	}
	if u.OnDecisionTimeout != nil {
		l.OnDecisionTimeout = *u.OnDecisionTimeout
	}
	if u.Variables != nil {
		l.Variables = *u.Variables
		if len(l.Variables) == 0 {
			l.Variables = nil
		}
	}
	switch {
	case u.DefaultDestinationCountries:
		l.AllowedDestinationCountries = nil
	case u.AllowedDestinationCountries != nil:
		// validate parsed them already.
		l.AllowedDestinationCountries, _ = destination.ParseCountries("allowed_destination_countries", *u.AllowedDestinationCountries)
	}
	if u.Metadata != nil {
		m, err := u.Metadata.Apply(l.Metadata)
		if err != nil {
			return err
		}
		l.Metadata = m
	}
	return nil
}
