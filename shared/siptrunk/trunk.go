// Package siptrunk holds SIP trunks: how a customer's own numbers reach Bridgeline (a
// provider such as Twilio or Telnyx, or a company's PBX), and the SIP lines on them. A
// trunk says which addresses or digest credentials inbound calls must come with, and
// where and how outbound calls go; each SIP line is one of the customer's numbers on a
// trunk.
//
// LiveKit's SIP bridge takes the calls, from what Bridgeline keeps in LiveKit for each
// trunk (Sync): an outbound trunk, and, once the trunk has lines, an inbound trunk for
// their numbers and a dispatch rule that names each call's room by sip.RoomPrefix.
// Bridgeline owns the truth: every write here is followed by a Sync of its trunk, and
// the sweeper's Reconcile repairs a Sync that failed half way (LiveKit down, a crash),
// creating what is missing and removing what LiveKit holds for trunks that are gone.
package siptrunk

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

// IDPrefix starts a trunk's id.
const IDPrefix = "trunk"

// Limits of a trunk's fields.
const (
	MaxNameLen          = 200
	MaxAllowedAddresses = 20
	MinPasswordLen      = 8
	MaxPasswordLen      = 128
	// MinInboundPasswordLen is the shortest inbound password a customer may set: the
	// bridge's SIP port is open to the internet, so it must resist guessing.
	MinInboundPasswordLen = 24
	// GeneratedPasswordLen is the length of an inbound password Bridgeline generates
	// (letters and digits: about 190 bits).
	GeneratedPasswordLen = 32
	// GeneratedUsernameLen is the length of a generated inbound username after its "bl".
	GeneratedUsernameLen = 14
	// MaxLines is how many lines one trunk may carry (LiveKit's trunk lists them).
	MaxLines = 1000
)

// Trunk is the stored record.
type Trunk struct {
	ID        string    `json:"id"`
	AccountID string    `json:"account_id"`
	Name      string    `json:"name"`
	Inbound   *Inbound  `json:"inbound,omitempty"`
	Outbound  *Outbound `json:"outbound,omitempty"`
	// MediaEncryption is SRTP on the trunk's calls, both ways (one of MediaEncryptions);
	// "" (a trunk stored before the setting) is EncryptDisable.
	MediaEncryption string `json:"media_encryption,omitempty"`
	// Numbers are the handles of the SIP lines on the trunk, in the order they were
	// added: the numbers LiveKit takes calls for and dials from through it.
	Numbers   []string  `json:"numbers,omitempty"`
	Revision  int64     `json:"revision"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Inbound is what a call from the provider must come with: the trunk's own digest
// credentials, which the bridge challenges every INVITE for, and, when AllowedAddresses
// is set, a source address in it. Password is sealed at rest. A trunk stored before
// inbound credentials were required may lack them: its numbers take no calls until it is
// given some (see desired).
type Inbound struct {
	AllowedAddresses []string `json:"allowed_addresses,omitempty"`
	Username         string   `json:"username,omitempty"`
	Password         string   `json:"password,omitempty"`
	// NewPassword is the inbound password in clear when Bridgeline generated it in this
	// write: the API shows it in that answer only. Never stored.
	NewPassword string `json:"-"`
}

// Outbound is where calls go out: the provider's SIP address (host[:port]) and
// transport, with optional digest credentials (Password sealed at rest).
type Outbound struct {
	Address   string `json:"address"`
	Transport string `json:"transport"`
	Username  string `json:"username,omitempty"`
	Password  string `json:"password,omitempty"`
}

// Transports of Outbound.
var Transports = []string{string(rtc.SIPTransportUDP), string(rtc.SIPTransportTCP), string(rtc.SIPTransportTLS)}

// Media encryption settings (LiveKit's SIPMediaEncryption): plain RTP only, SRTP when
// the other side offers or accepts it, or SRTP only (a call that cannot is refused).
const (
	EncryptDisable = string(rtc.SIPEncryptDisable)
	EncryptAllow   = string(rtc.SIPEncryptAllow)
	EncryptRequire = string(rtc.SIPEncryptRequire)
)

// MediaEncryptions are the values of Trunk.MediaEncryption.
var MediaEncryptions = []string{EncryptDisable, EncryptAllow, EncryptRequire}

// Encryption is the trunk's media encryption ("" read as EncryptDisable).
func (t Trunk) Encryption() string {
	if t.MediaEncryption == "" {
		return EncryptDisable
	}
	return t.MediaEncryption
}

// DefaultEncryption is a new trunk's media encryption when the request names none:
// EncryptAllow when its outbound side signals over TLS (the SRTP keys SDP carries are
// then encrypted too, and a provider without SRTP still gets plain RTP), EncryptDisable
// otherwise (over udp or tcp the keys would travel in clear beside the media they
// protect, and plain RTP is what every provider takes).
func DefaultEncryption(out *OutboundInput) string {
	if out != nil && out.Transport == string(rtc.SIPTransportTLS) {
		return EncryptAllow
	}
	return EncryptDisable
}

// Store keeps trunks.
//
// Errors: GetTrunk returns apierr.ErrNotFound. UpdateTrunk and DeleteTrunk are
// conditional on t.Revision (apierr.ErrConflict when it moved; the service reads again).
// AllTrunks pages through every account's trunks by id, for Reconcile.
type Store interface {
	CreateTrunk(ctx context.Context, t Trunk) error
	GetTrunk(ctx context.Context, id string) (Trunk, error)
	// ListTrunks returns up to Limit+1 trunks of the account, newest first.
	ListTrunks(ctx context.Context, accountID string, q listing.Query) ([]Trunk, error)
	UpdateTrunk(ctx context.Context, t Trunk) error
	DeleteTrunk(ctx context.Context, t Trunk) error
	// AllTrunks returns up to limit trunks whose id is above afterID, in id order.
	AllTrunks(ctx context.Context, afterID string, limit int) ([]Trunk, error)
}

// Input is a create's or an update's fields. On an update nil leaves a field as it is;
// ClearInbound and ClearOutbound remove one (null).
type Input struct {
	Name     *string
	Inbound  *InboundInput
	Outbound *OutboundInput
	// MediaEncryption is one of MediaEncryptions; nil on a create is DefaultEncryption.
	MediaEncryption *string
	ClearInbound    bool
	ClearOutbound   bool
}

// InboundInput is inbound as a request gives it. Username and Password may be left out:
// the stored ones stay (the password only with its username), and a trunk without them
// gets generated ones (the password shown once, in Inbound.NewPassword).
type InboundInput struct {
	AllowedAddresses []string
	Username         string
	Password         *string
}

// OutboundInput is outbound as a request gives it (Password as InboundInput's).
type OutboundInput struct {
	Address   string
	Transport string
	Username  string
	Password  *string
}

var (
	username = regexp.MustCompile(`^[A-Za-z0-9._~!$&'()*+,;=%-]{1,64}$`)
	hostname = regexp.MustCompile(`^(?i)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)
)

// validate checks the input's own rules (a create's required fields are checked by
// Create).
func (in Input) validate() error {
	if in.Name != nil && (utf8.RuneCountInString(*in.Name) > MaxNameLen || !utf8.ValidString(*in.Name) ||
		strings.ContainsAny(*in.Name, "\x00\r\n")) {
		return apierr.Invalid("name", fmt.Sprintf("name must be at most %d characters on one line", MaxNameLen))
	}
	if in.Inbound != nil {
		if err := in.Inbound.validate(); err != nil {
			return err
		}
	}
	if in.Outbound != nil {
		if err := in.Outbound.validate(); err != nil {
			return err
		}
	}
	if in.MediaEncryption != nil && !slices.Contains(MediaEncryptions, *in.MediaEncryption) {
		return apierr.Invalid("media_encryption", "media_encryption must be disable, allow or require (SRTP)")
	}
	return nil
}

func (in *InboundInput) validate() error {
	if len(in.AllowedAddresses) > MaxAllowedAddresses {
		return apierr.Invalid("inbound.allowed_addresses", fmt.Sprintf("inbound.allowed_addresses holds at most %d addresses", MaxAllowedAddresses))
	}
	for i, a := range in.AllowedAddresses {
		p, err := parseAllowed(a)
		if err != nil {
			return apierr.Invalid("inbound.allowed_addresses", fmt.Sprintf("inbound.allowed_addresses[%d] %q is not an IP address or CIDR block (203.0.113.7 or 203.0.113.0/24)", i, a))
		}
		if p.Bits() == 0 {
			return apierr.Invalid("inbound.allowed_addresses", fmt.Sprintf("inbound.allowed_addresses[%d] %q allows every address: give the provider's addresses, or use credentials", i, a))
		}
		if widest := widestBits(p.Addr()); p.Bits() < widest {
			return apierr.Invalid("inbound.allowed_addresses", fmt.Sprintf("inbound.allowed_addresses[%d] %q is wider than a /%d: give the provider's addresses, or use credentials", i, a, widest))
		}
		in.AllowedAddresses[i] = p.String()
	}
	if v4, v6 := span(in.AllowedAddresses); v4.Cmp(maxSpan(32)) > 0 || v6.Cmp(maxSpan(128)) > 0 {
		return apierr.Invalid("inbound.allowed_addresses", fmt.Sprintf("inbound.allowed_addresses together cover more addresses than a /%d (IPv4) or a /%d (IPv6): give the provider's addresses, or use credentials", MinAllowedBits4, MinAllowedBits6))
	}
	return inboundCredentials(in.Username, in.Password)
}

// inboundCredentials checks the inbound username and password a request gives, each
// optional (kept or generated): a password a customer sets must be as hard to guess as a
// generated one.
func inboundCredentials(user string, pass *string) error {
	if user != "" && !username.MatchString(user) {
		return apierr.Invalid("inbound.username", "inbound.username must be 1-64 characters, letters, digits and . _ ~ - and the like, no spaces or @ or :")
	}
	if pass != nil {
		if n := utf8.RuneCountInString(*pass); n < MinInboundPasswordLen || n > MaxPasswordLen || !utf8.ValidString(*pass) ||
			strings.ContainsAny(*pass, "\x00\r\n") {
			return apierr.Invalid("inbound.password", fmt.Sprintf(
				"inbound.password must be %d-%d characters on one line (leave it out and Bridgeline generates one)", MinInboundPasswordLen, MaxPasswordLen))
		}
	}
	return nil
}

// The widest block inbound.allowed_addresses may name, and the most addresses its entries
// may cover together: a /8 for IPv4 (0.0.0.0/1 + 128.0.0.0/1 is the whole Internet in two
// entries), a /32 for IPv6 (a whole provider's allocation). A provider's signalling
// addresses are a few small blocks.
const (
	MinAllowedBits4 = 8
	MinAllowedBits6 = 32
)

func widestBits(a netip.Addr) int {
	if a.Is4() {
		return MinAllowedBits4
	}
	return MinAllowedBits6
}

// maxSpan is how many addresses the widest allowed block of a family (of bitLen bits)
// holds.
func maxSpan(bitLen int) *big.Int {
	if bitLen == 32 {
		return new(big.Int).Lsh(big.NewInt(1), 32-MinAllowedBits4)
	}
	return new(big.Int).Lsh(big.NewInt(1), uint(128-MinAllowedBits6))
}

// span is how many distinct IPv4 and IPv6 addresses the blocks (masked CIDRs) cover
// together: two blocks are nested or apart, so a block inside another counts once.
func span(blocks []string) (v4, v6 *big.Int) {
	v4, v6 = new(big.Int), new(big.Int)
	var ps []netip.Prefix
	for _, b := range blocks {
		if p, err := netip.ParsePrefix(b); err == nil {
			ps = append(ps, p)
		}
	}
	for i, p := range ps {
		nested := false
		for j, q := range ps {
			if i != j && q.Bits() <= p.Bits() && q.Contains(p.Addr()) && (q.Bits() < p.Bits() || j < i) {
				nested = true // inside q (or a copy of an earlier one)
				break
			}
		}
		if nested {
			continue
		}
		n := new(big.Int).Lsh(big.NewInt(1), uint(p.Addr().BitLen()-p.Bits()))
		if p.Addr().Is4() {
			v4.Add(v4, n)
		} else {
			v6.Add(v6, n)
		}
	}
	return v4, v6
}

// parseAllowed reads an IP address (a /32 or /128) or a CIDR block, masked.
func parseAllowed(a string) (netip.Prefix, error) {
	if !strings.Contains(a, "/") {
		ip, err := netip.ParseAddr(a)
		if err != nil || ip.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("not an address")
		}
		return netip.PrefixFrom(ip, ip.BitLen()), nil
	}
	p, err := netip.ParsePrefix(a)
	if err != nil {
		return netip.Prefix{}, err
	}
	return p.Masked(), nil
}

func (out *OutboundInput) validate() error {
	if out.Address == "" {
		return apierr.Param(apierr.CodeParameterMissing, "outbound.address", "outbound.address is required: the provider's SIP host[:port]")
	}
	if err := checkAddress(out.Address); err != nil {
		return apierr.Invalid("outbound.address", fmt.Sprintf("outbound.address %q %s: give the provider's SIP host[:port], e.g. example.pstn.twilio.com or sip.telnyx.com:5060", out.Address, err))
	}
	if out.Transport == "" {
		out.Transport = string(rtc.SIPTransportUDP)
	}
	valid := false
	for _, t := range Transports {
		valid = valid || out.Transport == t
	}
	if !valid {
		return apierr.Invalid("outbound.transport", "outbound.transport must be udp, tcp or tls")
	}
	return credentials("outbound", out.Username, out.Password)
}

// checkAddress accepts host[:port] with a DNS name or an IP address (IPv6 in brackets).
func checkAddress(a string) error {
	if strings.Contains(a, "://") || strings.HasPrefix(a, "sip:") || strings.HasPrefix(a, "sips:") {
		return fmt.Errorf("has a scheme")
	}
	host, port := a, ""
	if h, p, err := net.SplitHostPort(a); err == nil {
		host, port = h, p
	} else if strings.Count(a, ":") == 1 {
		return fmt.Errorf("has a bad port")
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("has a bad port")
		}
	}
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return nil
	}
	if len(host) > 253 || !hostname.MatchString(host) {
		return fmt.Errorf("is not a host name or IP address")
	}
	return nil
}

// credentials checks a username and password given together; a nil password is left to
// the caller (kept from the stored trunk, or missing on a create).
func credentials(side, user string, pass *string) error {
	if user == "" {
		if pass != nil && *pass != "" {
			return apierr.Param(apierr.CodeParameterMissing, side+".username", side+".password needs "+side+".username")
		}
		return nil
	}
	if !username.MatchString(user) {
		return apierr.Invalid(side+".username", side+".username must be 1-64 characters, letters, digits and . _ ~ - and the like, no spaces or @ or :")
	}
	if pass != nil {
		if n := utf8.RuneCountInString(*pass); n < MinPasswordLen || n > MaxPasswordLen || !utf8.ValidString(*pass) ||
			strings.ContainsAny(*pass, "\x00\r\n") {
			return apierr.Invalid(side+".password", fmt.Sprintf("%s.password must be %d-%d characters on one line", side, MinPasswordLen, MaxPasswordLen))
		}
	}
	return nil
}

const (
	alnum      = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	lowerAlnum = "abcdefghijklmnopqrstuvwxyz0123456789"
)

// generate returns n characters drawn uniformly from alphabet by crypto/rand.
func generate(n int, alphabet string) (string, error) {
	out := make([]byte, 0, n)
	limit := 256 - 256%len(alphabet) // bytes at or above it would bias the draw
	buf := make([]byte, 2*n)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("generate inbound credentials: %w", err)
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < n {
				out = append(out, alphabet[int(b)%len(alphabet)])
			}
		}
	}
	return string(out), nil
}
