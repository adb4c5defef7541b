package rtc

import "time"

// SIPTransport is how SIP reaches a trunk's provider.
type SIPTransport string

// Transports.
const (
	SIPTransportUDP SIPTransport = "udp"
	SIPTransportTCP SIPTransport = "tcp"
	SIPTransportTLS SIPTransport = "tls"
)

// SIPMediaEncryption is whether a trunk's calls carry SRTP (livekit.SIPMediaEncryption).
type SIPMediaEncryption string

// Media encryption settings: plain RTP, SRTP when the other side takes it, SRTP only.
const (
	SIPEncryptDisable SIPMediaEncryption = "disable"
	SIPEncryptAllow   SIPMediaEncryption = "allow"
	SIPEncryptRequire SIPMediaEncryption = "require"
)

// SIPInboundTrunk is what LiveKit's SIP bridge accepts calls from: a provider's
// addresses and/or digest credentials, for some called numbers. A call that matches no
// trunk (wrong source address, wrong or missing credentials, unknown number) is refused
// at the SIP level and reaches no room.
type SIPInboundTrunk struct {
	ID       string
	Name     string
	Metadata string
	// Numbers are the called numbers (E.164) the trunk takes calls for; empty: any.
	Numbers []string
	// AllowedAddresses are the IPs or CIDRs the provider signals from; empty: any.
	AllowedAddresses []string
	// AllowedNumbers are the caller numbers accepted; empty: any.
	AllowedNumbers []string
	// AuthUsername and AuthPassword, when set, are required by digest authentication.
	// LiveKit returns the password when a trunk is read.
	AuthUsername string
	AuthPassword string
	// RingingTimeout bounds how long a caller waits for someone in the room to publish
	// audio (the bridge answers only then); MaxCallDuration ends long calls. Zero: the
	// bridge's defaults.
	RingingTimeout  time.Duration
	MaxCallDuration time.Duration
	// MediaEncryption is SRTP on the trunk's calls ("": the bridge's default, disable).
	MediaEncryption SIPMediaEncryption
}

// SIPOutboundTrunk is how LiveKit's SIP bridge dials out through a provider.
type SIPOutboundTrunk struct {
	ID       string
	Name     string
	Metadata string
	// Address is the provider's SIP host[:port] (no sip: prefix).
	Address   string
	Transport SIPTransport
	// Numbers are the caller ids calls may go out with; CreateSIPParticipant picks one
	// (SIPCall.From) or the bridge picks at random.
	Numbers      []string
	AuthUsername string
	AuthPassword string
	// MediaEncryption is SRTP on the trunk's calls ("": the bridge's default, disable).
	MediaEncryption SIPMediaEncryption
}

// SIPDispatchRule says which room an accepted inbound call joins: Room (one named room,
// which must exist: rooms are never created by a join) or RoomPrefix (a new room per
// call, named <prefix>_<caller>_<random>), for calls through TrunkIDs (empty: any trunk).
type SIPDispatchRule struct {
	ID         string
	Name       string
	Metadata   string
	TrunkIDs   []string
	Room       string
	RoomPrefix string
	// Attributes are given to every SIP participant the rule creates.
	Attributes map[string]string
}

// SIPOutboundConfig is an outbound trunk given with one call (CreateSIPParticipant's
// trunk) instead of one LiveKit stores: the credentials stay with the caller.
type SIPOutboundConfig struct {
	// Address is the provider's SIP host[:port] (no sip: prefix).
	Address      string
	Transport    SIPTransport
	AuthUsername string
	AuthPassword string
	// MediaEncryption is SRTP on the call ("": disable).
	MediaEncryption SIPMediaEncryption
}

// SIPCall asks LiveKit's SIP bridge to dial a number through an outbound trunk and bring
// the callee into a room as a participant.
type SIPCall struct {
	// TrunkID is a stored outbound trunk, or Trunk the trunk for this call alone (then
	// From is required): one of the two.
	TrunkID string
	Trunk   *SIPOutboundConfig
	// To is the number (or SIP user) to dial; From the caller id, one of the trunk's
	// numbers (empty: the trunk's choice).
	To   string
	From string
	Room string
	// Identity and Name of the callee's participant; empty Identity: the bridge's
	// ("sip_<number>").
	Identity   string
	Name       string
	Metadata   string
	Attributes map[string]string
	// WaitUntilAnswered makes CreateSIPParticipant return only once the callee answered
	// (or the call failed); otherwise it returns when the call is placed.
	WaitUntilAnswered bool
	// RingingTimeout bounds the ringing (zero: the bridge's default, 80 s);
	// MaxCallDuration ends long calls.
	RingingTimeout  time.Duration
	MaxCallDuration time.Duration
	// DTMF is dialled once answered (an extension: "1234", w for a 0.5 s pause).
	DTMF string
}

// SIPParticipant is the participant a SIP call became.
type SIPParticipant struct {
	ParticipantID string
	Identity      string
	Room          string
	// CallID is the bridge's id of the call (sip.callID attribute).
	CallID string
}

// SIPTransfer hands a live SIP call over with a SIP REFER.
type SIPTransfer struct {
	Room     string
	Identity string
	// To is a sip: URI or tel: number the far end is asked to call.
	To string
	// PlayDialtone plays a dial tone to the caller while the transfer is under way.
	PlayDialtone bool
	// RingingTimeout bounds the wait for the transfer target to answer (zero: 30 s).
	RingingTimeout time.Duration
}

// SIP participant attributes the bridge sets (livekit.AttrSIP*).
const (
	AttrSIPCallStatus  = "sip.callStatus"
	AttrSIPCallID      = "sip.callID"
	AttrSIPTrunkID     = "sip.trunkID"
	AttrSIPRuleID      = "sip.ruleID"
	AttrSIPPhoneNumber = "sip.phoneNumber"
	AttrSIPTrunkNumber = "sip.trunkPhoneNumber"
)
