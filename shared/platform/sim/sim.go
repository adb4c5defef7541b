// Package sim is the simulated calling platform as the control plane knows it, with no
// media code: its Kind (name, handles, what it can do), and the routes of its HTTP API.
// The sim itself (its parties, its rooms) is media fleet code, mediafleet/platformsim;
// the control plane reaches it in process or through a platform gateway
// (shared/platform/simclient). Both adapters embed Kind.
package sim

import (
	"errors"
	"regexp"
	"strings"

	"github.com/bridgeline/bridgeline/shared/platform"
)

// Name is the platform name the sim's lines record.
const Name = "sim"

// HandlePrefix starts a sim party's handle: sim:<name>.
const HandlePrefix = "sim:"

// Handles with a scripted outcome when dialled.
const (
	HandleBusy     = HandlePrefix + "busy"
	HandleNoAnswer = HandlePrefix + "no_answer"
	HandleFailed   = HandlePrefix + "failed"
)

// partyName is a sim party's name after "sim:" (the scripted outcomes among them).
var partyName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Kind is the sim's platform.Kind: it dials E.164 numbers and sim:<name> parties, cannot
// transfer, and takes sk_test_ keys (no real call leaves it).
type Kind struct{}

var _ platform.Kind = Kind{}

// Name is "sim".
func (Kind) Name() string { return Name }

// CheckHandle accepts an E.164 number or "sim:<name>" (1-64 letters, digits, '.', '_'
// or '-', starting with a letter or digit).
func (Kind) CheckHandle(handle string) error {
	if platform.IsE164(handle) {
		return nil
	}
	if name, ok := strings.CutPrefix(handle, HandlePrefix); ok && partyName.MatchString(name) {
		return nil
	}
	return errHandle
}

var errHandle = errors.New("an E.164 number (+ and 8-15 digits, e.g. +15550100002) or sim:<name> " +
	"(1-64 letters, digits, '.', '_' or '-', e.g. sim:alice)")

// CanTransfer is false: a sim call stays in its room.
func (Kind) CanTransfer() bool { return false }

// TestKeys is true: the sim places no real call.
func (Kind) TestKeys() bool { return true }

// Patterns are the net/http patterns of the sim's HTTP API and its browser caller page,
// all served by the sim's handler (mediafleet/platformsim). The local stack mounts them
// as public routes (no API key) outside /v1 (httpapi.Passthrough); the sim writes its own
// responses: its JSON, and the page's HTML and scripts. A plain list, so the sim depends
// on no HTTP layer of the control plane, and the route table's tests need no media code.
var Patterns = []string{
	"POST /sim/calls", "GET /sim/calls",
	"GET /sim/calls/{id}", "POST /sim/calls/{id}/hangup",
	"POST /sim/calls/{id}/joined", "POST /sim/calls/{id}/say",
	"GET /sim/{$}", "GET /sim/page/{file}",
}
