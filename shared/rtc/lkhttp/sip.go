package lkhttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/shared/lktoken"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

// LiveKit's SIP service (livekit.SIP in livekit_sip.proto), in protobuf's JSON. The field
// names are the ones livekit-server v1.11.0 (protocol v1.45.3), livekit-sip v1.8.0
// (protocol v1.48.1) and protocol v1.49.0 share; lkhttp's tests decode every request
// with protocol v1.49.0's own types, rejecting unknown fields.

const sipService = "SIP"

var (
	sipAdmin = lktoken.Claims{SIP: &lktoken.SIPGrant{Admin: true}}
	sipCall  = lktoken.Claims{SIP: &lktoken.SIPGrant{Call: true}}
)

// ErrNotFound is a trunk, rule or participant LiveKit does not have.
var ErrNotFound = errors.New("rtc: not found")

// sipDialTimeout bounds a CreateSIPParticipant that waits for the answer beyond its
// ringing timeout: what livekit-server itself allows (80 s), plus the bridge's set-up.
const sipDialTimeout = 90 * time.Second

// protoDuration is a google.protobuf.Duration in JSON ("1.5s"); empty for zero.
func protoDuration(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

func parseProtoDuration(s string) time.Duration {
	d, _ := time.ParseDuration(s)
	return d
}

// nonEmpty is s, or nil when empty: answers with defaults emitted carry [] for an empty list.
func nonEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// inboundTrunkJSON is livekit.SIPInboundTrunkInfo.
type inboundTrunkJSON struct {
	SIPTrunkID       string   `json:"sip_trunk_id,omitempty"`
	Name             string   `json:"name,omitempty"`
	Metadata         string   `json:"metadata,omitempty"`
	Numbers          []string `json:"numbers,omitempty"`
	AllowedAddresses []string `json:"allowed_addresses,omitempty"`
	AllowedNumbers   []string `json:"allowed_numbers,omitempty"`
	AuthUsername     string   `json:"auth_username,omitempty"`
	AuthPassword     string   `json:"auth_password,omitempty"`
	RingingTimeout   string   `json:"ringing_timeout,omitempty"`
	MaxCallDuration  string   `json:"max_call_duration,omitempty"`
	MediaEncryption  string   `json:"media_encryption,omitempty"`
}

// inboundTrunkIn is the same message as LiveKit answers it (folded names).
type inboundTrunkIn struct {
	SIPTrunkID       string          `json:"siptrunkid"`
	Name             string          `json:"name"`
	Metadata         string          `json:"metadata"`
	Numbers          []string        `json:"numbers"`
	AllowedAddresses []string        `json:"allowedaddresses"`
	AllowedNumbers   []string        `json:"allowednumbers"`
	AuthUsername     string          `json:"authusername"`
	AuthPassword     string          `json:"authpassword"`
	RingingTimeout   string          `json:"ringingtimeout"`
	MaxCallDuration  string          `json:"maxcallduration"`
	MediaEncryption  json.RawMessage `json:"mediaencryption"`
}

func inboundToJSON(t rtc.SIPInboundTrunk) inboundTrunkJSON {
	return inboundTrunkJSON{Name: t.Name, Metadata: t.Metadata, Numbers: t.Numbers,
		AllowedAddresses: t.AllowedAddresses, AllowedNumbers: t.AllowedNumbers,
		AuthUsername: t.AuthUsername, AuthPassword: t.AuthPassword,
		RingingTimeout: protoDuration(t.RingingTimeout), MaxCallDuration: protoDuration(t.MaxCallDuration),
		MediaEncryption: encryptions[t.MediaEncryption]}
}

func (t inboundTrunkIn) trunk() rtc.SIPInboundTrunk {
	return rtc.SIPInboundTrunk{ID: t.SIPTrunkID, Name: t.Name, Metadata: t.Metadata, Numbers: nonEmpty(t.Numbers),
		AllowedAddresses: nonEmpty(t.AllowedAddresses), AllowedNumbers: nonEmpty(t.AllowedNumbers),
		AuthUsername: t.AuthUsername, AuthPassword: t.AuthPassword,
		RingingTimeout: parseProtoDuration(t.RingingTimeout), MaxCallDuration: parseProtoDuration(t.MaxCallDuration),
		MediaEncryption: encryptionOf(t.MediaEncryption)}
}

// outboundTrunkJSON is livekit.SIPOutboundTrunkInfo.
type outboundTrunkJSON struct {
	SIPTrunkID   string   `json:"sip_trunk_id,omitempty"`
	Name         string   `json:"name,omitempty"`
	Metadata     string   `json:"metadata,omitempty"`
	Address      string   `json:"address"`
	Transport    string   `json:"transport,omitempty"`
	Numbers      []string `json:"numbers"`
	AuthUsername string   `json:"auth_username,omitempty"`
	AuthPassword string   `json:"auth_password,omitempty"`
	// MediaEncryption is livekit.SIPMediaEncryption's name.
	MediaEncryption string `json:"media_encryption,omitempty"`
}

type outboundTrunkIn struct {
	SIPTrunkID      string          `json:"siptrunkid"`
	Name            string          `json:"name"`
	Metadata        string          `json:"metadata"`
	Address         string          `json:"address"`
	Transport       json.RawMessage `json:"transport"`
	Numbers         []string        `json:"numbers"`
	AuthUsername    string          `json:"authusername"`
	AuthPassword    string          `json:"authpassword"`
	MediaEncryption json.RawMessage `json:"mediaencryption"`
}

// transports maps rtc's names to livekit.SIPTransport's, and sipTransportNumbers the
// enum's numbers to rtc's, for an answer that encodes it as a number.
var (
	transports          = map[rtc.SIPTransport]string{rtc.SIPTransportUDP: "SIP_TRANSPORT_UDP", rtc.SIPTransportTCP: "SIP_TRANSPORT_TCP", rtc.SIPTransportTLS: "SIP_TRANSPORT_TLS"}
	sipTransportNumbers = map[int]string{0: "SIP_TRANSPORT_AUTO", 1: "SIP_TRANSPORT_UDP", 2: "SIP_TRANSPORT_TCP", 3: "SIP_TRANSPORT_TLS"}
	// encryptions maps rtc's media encryption to livekit.SIPMediaEncryption's names
	// ("" sends none: the bridge's default, disable), encryptionNumbers the enum's numbers.
	encryptions = map[rtc.SIPMediaEncryption]string{rtc.SIPEncryptDisable: "SIP_MEDIA_ENCRYPT_DISABLE",
		rtc.SIPEncryptAllow: "SIP_MEDIA_ENCRYPT_ALLOW", rtc.SIPEncryptRequire: "SIP_MEDIA_ENCRYPT_REQUIRE"}
	encryptionNumbers = map[int]string{0: "SIP_MEDIA_ENCRYPT_DISABLE", 1: "SIP_MEDIA_ENCRYPT_ALLOW", 2: "SIP_MEDIA_ENCRYPT_REQUIRE"}
)

// encryptionOf reads LiveKit's media encryption (a name or a number; absent is disable).
func encryptionOf(raw json.RawMessage) rtc.SIPMediaEncryption {
	if len(raw) == 0 || string(raw) == "null" {
		return rtc.SIPEncryptDisable
	}
	name := enumName(raw, encryptionNumbers)
	for k, v := range encryptions {
		if v == name {
			return k
		}
	}
	return rtc.SIPEncryptDisable
}

func outboundToJSON(t rtc.SIPOutboundTrunk) (outboundTrunkJSON, error) {
	if t.Address == "" || strings.HasPrefix(strings.ToLower(t.Address), "sip:") {
		return outboundTrunkJSON{}, fmt.Errorf("rtc: outbound trunk address %q must be host[:port]", t.Address)
	}
	tr := ""
	if t.Transport != "" {
		var ok bool
		if tr, ok = transports[t.Transport]; !ok {
			return outboundTrunkJSON{}, fmt.Errorf("rtc: transport %q is not udp, tcp or tls", t.Transport)
		}
	}
	enc, ok := encryptions[t.MediaEncryption]
	if !ok && t.MediaEncryption != "" {
		return outboundTrunkJSON{}, fmt.Errorf("rtc: media encryption %q is not disable, allow or require", t.MediaEncryption)
	}
	return outboundTrunkJSON{Name: t.Name, Metadata: t.Metadata, Address: t.Address, Transport: tr,
		Numbers: t.Numbers, AuthUsername: t.AuthUsername, AuthPassword: t.AuthPassword, MediaEncryption: enc}, nil
}

func (t outboundTrunkIn) trunk() rtc.SIPOutboundTrunk {
	out := rtc.SIPOutboundTrunk{ID: t.SIPTrunkID, Name: t.Name, Metadata: t.Metadata, Address: t.Address,
		Numbers: nonEmpty(t.Numbers), AuthUsername: t.AuthUsername, AuthPassword: t.AuthPassword,
		MediaEncryption: encryptionOf(t.MediaEncryption)}
	name := enumName(t.Transport, sipTransportNumbers)
	for k, v := range transports {
		if v == name {
			out.Transport = k
		}
	}
	return out
}

// dispatchRuleJSON is livekit.SIPDispatchRuleInfo; Rule is livekit.SIPDispatchRule, a
// oneof: {"dispatch_rule_direct": {...}} or {"dispatch_rule_individual": {...}}.
type dispatchRuleJSON struct {
	SIPDispatchRuleID string                       `json:"sip_dispatch_rule_id,omitempty"`
	Rule              map[string]map[string]string `json:"rule"`
	TrunkIDs          []string                     `json:"trunk_ids,omitempty"`
	Name              string                       `json:"name,omitempty"`
	Metadata          string                       `json:"metadata,omitempty"`
	Attributes        map[string]string            `json:"attributes,omitempty"`
}

type dispatchRuleIn struct {
	SIPDispatchRuleID string            `json:"sipdispatchruleid"`
	Rule              json.RawMessage   `json:"rule"`
	TrunkIDs          []string          `json:"trunkids"`
	Name              string            `json:"name"`
	Metadata          string            `json:"metadata"`
	Attributes        map[string]string `json:"attributes"`
}

func ruleToJSON(r rtc.SIPDispatchRule) (dispatchRuleJSON, error) {
	out := dispatchRuleJSON{TrunkIDs: r.TrunkIDs, Name: r.Name, Metadata: r.Metadata, Attributes: r.Attributes}
	switch {
	case (r.Room == "") == (r.RoomPrefix == ""):
		return out, errors.New("rtc: a dispatch rule needs a room or a room prefix, not both")
	case r.Room != "":
		out.Rule = map[string]map[string]string{"dispatch_rule_direct": {"room_name": r.Room}}
	default:
		out.Rule = map[string]map[string]string{"dispatch_rule_individual": {"room_prefix": r.RoomPrefix}}
	}
	return out, nil
}

func (r dispatchRuleIn) rule() (rtc.SIPDispatchRule, error) {
	out := rtc.SIPDispatchRule{ID: r.SIPDispatchRuleID, TrunkIDs: nonEmpty(r.TrunkIDs), Name: r.Name, Metadata: r.Metadata}
	if len(r.Attributes) > 0 {
		out.Attributes = r.Attributes
	}
	if len(r.Rule) == 0 || string(r.Rule) == "null" {
		return out, nil
	}
	var rule struct {
		Direct     json.RawMessage `json:"dispatchruledirect"`
		Individual json.RawMessage `json:"dispatchruleindividual"`
	}
	var fields struct {
		RoomName   string `json:"roomname"`
		RoomPrefix string `json:"roomprefix"`
	}
	if err := decodeProtoJSON(r.Rule, &rule); err != nil {
		return out, err
	}
	switch {
	case len(rule.Direct) > 0:
		if err := decodeProtoJSON(rule.Direct, &fields); err != nil {
			return out, err
		}
		out.Room = fields.RoomName
	case len(rule.Individual) > 0:
		if err := decodeProtoJSON(rule.Individual, &fields); err != nil {
			return out, err
		}
		out.RoomPrefix = fields.RoomPrefix
	}
	return out, nil
}

// CreateSIPInboundTrunk stores a new inbound trunk; its ID is LiveKit's.
func (c *Client) CreateSIPInboundTrunk(ctx context.Context, t rtc.SIPInboundTrunk) (rtc.SIPInboundTrunk, error) {
	var out inboundTrunkIn
	if err := c.callAs(ctx, c.hc, sipService, "CreateSIPInboundTrunk", sipAdmin, map[string]any{"trunk": inboundToJSON(t)}, &out); err != nil {
		return rtc.SIPInboundTrunk{}, fmt.Errorf("rtc: create inbound trunk: %w", err)
	}
	return out.trunk(), nil
}

// UpdateSIPInboundTrunk replaces trunk t.ID with t, whole.
func (c *Client) UpdateSIPInboundTrunk(ctx context.Context, t rtc.SIPInboundTrunk) (rtc.SIPInboundTrunk, error) {
	var out inboundTrunkIn
	req := map[string]any{"sip_trunk_id": t.ID, "replace": inboundToJSON(t)}
	if err := c.callAs(ctx, c.hc, sipService, "UpdateSIPInboundTrunk", sipAdmin, req, &out); err != nil {
		return rtc.SIPInboundTrunk{}, fmt.Errorf("rtc: update inbound trunk %s: %w", t.ID, sipErr(err))
	}
	return out.trunk(), nil
}

// ListSIPInboundTrunks lists every inbound trunk.
func (c *Client) ListSIPInboundTrunks(ctx context.Context) ([]rtc.SIPInboundTrunk, error) {
	items, err := c.list(ctx, "ListSIPInboundTrunk")
	if err != nil {
		return nil, fmt.Errorf("rtc: list inbound trunks: %w", err)
	}
	out := make([]rtc.SIPInboundTrunk, 0, len(items))
	for _, raw := range items {
		var t inboundTrunkIn
		if err := decodeProtoJSON(raw, &t); err != nil {
			return nil, fmt.Errorf("rtc: list inbound trunks: %w", err)
		}
		out = append(out, t.trunk())
	}
	return out, nil
}

// list calls a List method of the SIP service and returns its items, each still in
// protobuf's JSON (whose field names decodeProtoJSON folds: Twirp answers proto names).
func (c *Client) list(ctx context.Context, method string) ([]json.RawMessage, error) {
	var res struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := c.callAs(ctx, c.hc, sipService, method, sipAdmin, struct{}{}, &res); err != nil {
		return nil, err
	}
	return res.Items, nil
}

// CreateSIPOutboundTrunk stores a new outbound trunk.
func (c *Client) CreateSIPOutboundTrunk(ctx context.Context, t rtc.SIPOutboundTrunk) (rtc.SIPOutboundTrunk, error) {
	body, err := outboundToJSON(t)
	if err != nil {
		return rtc.SIPOutboundTrunk{}, err
	}
	var out outboundTrunkIn
	if err := c.callAs(ctx, c.hc, sipService, "CreateSIPOutboundTrunk", sipAdmin, map[string]any{"trunk": body}, &out); err != nil {
		return rtc.SIPOutboundTrunk{}, fmt.Errorf("rtc: create outbound trunk: %w", err)
	}
	return out.trunk(), nil
}

// UpdateSIPOutboundTrunk replaces trunk t.ID with t, whole.
func (c *Client) UpdateSIPOutboundTrunk(ctx context.Context, t rtc.SIPOutboundTrunk) (rtc.SIPOutboundTrunk, error) {
	body, err := outboundToJSON(t)
	if err != nil {
		return rtc.SIPOutboundTrunk{}, err
	}
	var out outboundTrunkIn
	req := map[string]any{"sip_trunk_id": t.ID, "replace": body}
	if err := c.callAs(ctx, c.hc, sipService, "UpdateSIPOutboundTrunk", sipAdmin, req, &out); err != nil {
		return rtc.SIPOutboundTrunk{}, fmt.Errorf("rtc: update outbound trunk %s: %w", t.ID, sipErr(err))
	}
	return out.trunk(), nil
}

// ListSIPOutboundTrunks lists every outbound trunk.
func (c *Client) ListSIPOutboundTrunks(ctx context.Context) ([]rtc.SIPOutboundTrunk, error) {
	items, err := c.list(ctx, "ListSIPOutboundTrunk")
	if err != nil {
		return nil, fmt.Errorf("rtc: list outbound trunks: %w", err)
	}
	out := make([]rtc.SIPOutboundTrunk, 0, len(items))
	for _, raw := range items {
		var t outboundTrunkIn
		if err := decodeProtoJSON(raw, &t); err != nil {
			return nil, fmt.Errorf("rtc: list outbound trunks: %w", err)
		}
		out = append(out, t.trunk())
	}
	return out, nil
}

// DeleteSIPTrunk removes an inbound or outbound trunk. One that is not there is not an
// error: deleting is what a retry after a half-done step does.
func (c *Client) DeleteSIPTrunk(ctx context.Context, id string) error {
	err := c.callAs(ctx, c.hc, sipService, "DeleteSIPTrunk", sipAdmin, map[string]string{"sip_trunk_id": id}, nil)
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("rtc: delete trunk %s: %w", id, err)
	}
	return nil
}

// CreateSIPDispatchRule stores a new dispatch rule.
func (c *Client) CreateSIPDispatchRule(ctx context.Context, r rtc.SIPDispatchRule) (rtc.SIPDispatchRule, error) {
	body, err := ruleToJSON(r)
	if err != nil {
		return rtc.SIPDispatchRule{}, err
	}
	var out dispatchRuleIn
	if err := c.callAs(ctx, c.hc, sipService, "CreateSIPDispatchRule", sipAdmin, map[string]any{"dispatch_rule": body}, &out); err != nil {
		return rtc.SIPDispatchRule{}, fmt.Errorf("rtc: create dispatch rule: %w", err)
	}
	return out.rule()
}

// UpdateSIPDispatchRule replaces rule r.ID with r, whole.
func (c *Client) UpdateSIPDispatchRule(ctx context.Context, r rtc.SIPDispatchRule) (rtc.SIPDispatchRule, error) {
	body, err := ruleToJSON(r)
	if err != nil {
		return rtc.SIPDispatchRule{}, err
	}
	var out dispatchRuleIn
	req := map[string]any{"sip_dispatch_rule_id": r.ID, "replace": body}
	if err := c.callAs(ctx, c.hc, sipService, "UpdateSIPDispatchRule", sipAdmin, req, &out); err != nil {
		return rtc.SIPDispatchRule{}, fmt.Errorf("rtc: update dispatch rule %s: %w", r.ID, sipErr(err))
	}
	return out.rule()
}

// ListSIPDispatchRules lists every dispatch rule.
func (c *Client) ListSIPDispatchRules(ctx context.Context) ([]rtc.SIPDispatchRule, error) {
	items, err := c.list(ctx, "ListSIPDispatchRule")
	if err != nil {
		return nil, fmt.Errorf("rtc: list dispatch rules: %w", err)
	}
	out := make([]rtc.SIPDispatchRule, 0, len(items))
	for _, raw := range items {
		var in dispatchRuleIn
		if err := decodeProtoJSON(raw, &in); err != nil {
			return nil, fmt.Errorf("rtc: list dispatch rules: %w", err)
		}
		r, err := in.rule()
		if err != nil {
			return nil, fmt.Errorf("rtc: list dispatch rules: %w", err)
		}
		out = append(out, r)
	}
	return out, nil
}

// DeleteSIPDispatchRule removes a dispatch rule; one that is not there is not an error.
func (c *Client) DeleteSIPDispatchRule(ctx context.Context, id string) error {
	err := c.callAs(ctx, c.hc, sipService, "DeleteSIPDispatchRule", sipAdmin, map[string]string{"sip_dispatch_rule_id": id}, nil)
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("rtc: delete dispatch rule %s: %w", id, err)
	}
	return nil
}

// CreateSIPParticipant dials call.To through an outbound trunk into call.Room. With
// WaitUntilAnswered it returns once the callee answered, or with the SIP failure (busy,
// no answer within RingingTimeout, rejected): the error then carries LiveKit's reason.
func (c *Client) CreateSIPParticipant(ctx context.Context, call rtc.SIPCall) (rtc.SIPParticipant, error) {
	if (call.TrunkID == "") == (call.Trunk == nil) || call.To == "" || call.Room == "" {
		return rtc.SIPParticipant{}, errors.New("rtc: a SIP call needs a trunk (an id or one for the call), a number and a room")
	}
	req := map[string]any{
		"sip_call_to": call.To, "room_name": call.Room,
		"wait_until_answered": call.WaitUntilAnswered,
	}
	if t := call.Trunk; t != nil {
		// livekit.SIPOutboundConfig: LiveKit stores nothing of it.
		if call.From == "" {
			return rtc.SIPParticipant{}, errors.New("rtc: a SIP call with its own trunk needs a caller number")
		}
		trunk, err := outboundToJSON(rtc.SIPOutboundTrunk{Address: t.Address, Transport: t.Transport, MediaEncryption: t.MediaEncryption})
		if err != nil {
			return rtc.SIPParticipant{}, err
		}
		config := map[string]string{"hostname": trunk.Address}
		for k, v := range map[string]string{"transport": trunk.Transport, "auth_username": t.AuthUsername, "auth_password": t.AuthPassword} {
			if v != "" {
				config[k] = v
			}
		}
		req["trunk"] = config
		if trunk.MediaEncryption != "" {
			req["media_encryption"] = trunk.MediaEncryption
		}
	} else {
		req["sip_trunk_id"] = call.TrunkID
	}
	for k, v := range map[string]string{"sip_number": call.From, "participant_identity": call.Identity,
		"participant_name": call.Name, "participant_metadata": call.Metadata, "dtmf": call.DTMF,
		"ringing_timeout": protoDuration(call.RingingTimeout), "max_call_duration": protoDuration(call.MaxCallDuration)} {
		if v != "" {
			req[k] = v
		}
	}
	if len(call.Attributes) > 0 {
		req["participant_attributes"] = call.Attributes
	}
	// The call blocks while it rings: past the client's usual timeout, within ctx.
	ctx, cancel := context.WithTimeout(ctx, sipDialTimeout)
	defer cancel()
	var out struct {
		ParticipantID       string `json:"participantid"`
		ParticipantIdentity string `json:"participantidentity"`
		RoomName            string `json:"roomname"`
		SIPCallID           string `json:"sipcallid"`
	}
	if err := c.callAs(ctx, c.slow(), sipService, "CreateSIPParticipant", sipCall, req, &out); err != nil {
		through := call.TrunkID
		if call.Trunk != nil {
			through = call.Trunk.Address
		}
		return rtc.SIPParticipant{}, fmt.Errorf("rtc: dial %s through %s: %w", call.To, through, sipErr(err))
	}
	return rtc.SIPParticipant{ParticipantID: out.ParticipantID, Identity: out.ParticipantIdentity,
		Room: out.RoomName, CallID: out.SIPCallID}, nil
}

// TransferSIPParticipant asks the SIP participant's far end to call t.To instead (SIP
// REFER) and returns once the transfer target answered; the participant then leaves
// the room. On failure the call stays as it was.
func (c *Client) TransferSIPParticipant(ctx context.Context, t rtc.SIPTransfer) error {
	if t.Room == "" || t.Identity == "" || t.To == "" {
		return errors.New("rtc: a transfer needs a room, a participant and a destination")
	}
	req := map[string]any{"room_name": t.Room, "participant_identity": t.Identity, "transfer_to": t.To,
		"play_dialtone": t.PlayDialtone}
	if d := protoDuration(t.RingingTimeout); d != "" {
		req["ringing_timeout"] = d
	}
	ctx, cancel := context.WithTimeout(ctx, sipDialTimeout)
	defer cancel()
	claims := lktoken.Claims{SIP: &lktoken.SIPGrant{Call: true}, Video: &lktoken.VideoGrant{RoomAdmin: true, Room: t.Room}}
	if err := c.callAs(ctx, c.slow(), sipService, "TransferSIPParticipant", claims, req, nil); err != nil {
		return fmt.Errorf("rtc: transfer %s in %s to %s: %w", t.Identity, t.Room, t.To, sipErr(err))
	}
	return nil
}

// slow is the HTTP client for calls that wait on a phone: the usual one without its
// overall timeout (ctx bounds them).
func (c *Client) slow() *http.Client {
	hc := *c.hc
	hc.Timeout = 0
	return &hc
}

// sipErr wraps a not-found answer in ErrNotFound.
func sipErr(err error) error {
	if isNotFound(err) {
		return fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	return err
}
