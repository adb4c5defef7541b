// Package livekitserver runs a real livekit-server for the local stack and for tests: it writes
// the server's YAML config from a typed Config, starts the binary that
// scripts/build-livekit-server.sh builds, waits until it answers, and stops it with a
// drain. livekit.yaml beside this file is the production-shaped config of the media fleet.
package livekitserver

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is what a local livekit-server needs. Zero ports are replaced by free ones when
// the server starts.
type Config struct {
	// Binary is the livekit-server executable (the local stack's LIVEKIT_SERVER_BIN).
	// Empty: the output of scripts/build-livekit-server.sh.
	Binary string
	// Dir holds the generated config and the server log. Empty: a temporary directory
	// removed by Stop.
	Dir string

	APIKey    string
	APISecret string

	Host       string // bind address; default 127.0.0.1
	Port       int    // HTTP and signalling (ws)
	RTCTCPPort int    // ICE over TCP
	// RTCUDPPort is the single UDP port all ICE traffic is muxed on. RTCUDPPortEnd > 0
	// makes it a range instead.
	RTCUDPPort    int
	RTCUDPPortEnd int
	// FullICE runs the server as a full ICE agent, livekit-server's default, instead of
	// ICE lite (rtc.use_ice_lite). Only the join benchmarks set it, as their baseline. A
	// full agent controls every subscriber connection, the one a join waits for; when
	// the client's first connectivity check reaches it before the client's trickled
	// candidate, pion/ice v4.2.2 (what livekit-server v1.11.0 is built with) keeps the
	// pair peer-reflexive and nominates it only after PrflxAcceptanceMinWait, 1 s. With
	// ICE lite the client nominates, at once (docs/performance.md, "Room joins").
	FullICE bool

	// WebhookURLs receive LiveKit's webhooks, signed with APIKey.
	WebhookURLs []string
	// WebhookEvents, when set, are the only events posted to WebhookURLs (the control
	// plane passes rtc.ReceivedEvents); empty: every event.
	WebhookEvents []string

	// EmptyTimeout closes a room nobody joined (default 60 s); DepartureTimeout closes
	// a room after its last participant left (default 5 s).
	EmptyTimeout     time.Duration
	DepartureTimeout time.Duration

	// RedisAddress enables multi-node routing (and agent dispatch across nodes), and is
	// how livekit-server reaches livekit-sip (SIP trunks, rules and calls go through
	// Redis). RedisPassword is its AUTH password.
	RedisAddress  string
	RedisPassword string

	LogLevel string // debug | info | warn | error; default warn
}

// Validate reports the first missing or invalid setting.
func (c Config) Validate() error {
	switch {
	case c.APIKey == "" || c.APISecret == "":
		return errors.New("livekit: api key and secret are required")
	case len(c.APISecret) < 32:
		// livekit-server refuses shorter secrets for HMAC-SHA256 outside dev mode.
		return errors.New("livekit: api secret must be at least 32 characters")
	case c.Port < 0 || c.RTCTCPPort < 0 || c.RTCUDPPort < 0:
		return errors.New("livekit: negative port")
	case c.RTCUDPPortEnd != 0 && c.RTCUDPPortEnd <= c.RTCUDPPort:
		return errors.New("livekit: udp port range end must be above its start")
	case c.Host != "" && net.ParseIP(c.Host) == nil:
		// It is also the ICE candidate's address (node_ip) and the one address the
		// media sockets listen on (rtc.ips).
		return fmt.Errorf("livekit: host %q is not an IP address", c.Host)
	}
	for _, u := range c.WebhookURLs {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return fmt.Errorf("livekit: webhook url %q is not http(s)", u)
		}
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Host == "" {
		c.Host = "127.0.0.1"
	}
	if c.EmptyTimeout == 0 {
		c.EmptyTimeout = time.Minute
	}
	if c.DepartureTimeout == 0 {
		c.DepartureTimeout = 5 * time.Second
	}
	if c.LogLevel == "" {
		c.LogLevel = "warn"
	}
	return c
}

// serverYAML mirrors the parts of livekit-server's config (pkg/config) that we set.
type serverYAML struct {
	Port          int               `yaml:"port"`
	BindAddresses []string          `yaml:"bind_addresses"`
	Keys          map[string]string `yaml:"keys"`
	RTC           rtcYAML           `yaml:"rtc"`
	Room          roomYAML          `yaml:"room"`
	Webhook       *webhookYAML      `yaml:"webhook,omitempty"`
	Redis         *redisYAML        `yaml:"redis,omitempty"`
	Agents        agentsYAML        `yaml:"agents"`
	Logging       loggingYAML       `yaml:"logging"`
}

// agentsYAML is livekit-server's agent dispatch (pkg/agent.Config).
type agentsYAML struct {
	TargetLoad float32 `yaml:"target_load"`
}

// AgentTargetLoad is the worker load up to which livekit-server sends a worker jobs. Its
// default, 0.7, is LiveKit's agents' CPU threshold; our workers report the larger of
// their job slots taken and their CPU (mediafleet/agent: 1 is full), so at 0.7 a worker
// was sent no job once 70% of its slots were taken (a node holding PERSONA_MAX_JOBS 10
// took 7 calls; the 8th to 10th were never dispatched). At 1 a worker takes jobs until
// its slots are full, and it says so itself (WS_FULL).
const AgentTargetLoad = 1.0

type rtcYAML struct {
	TCPPort                 int      `yaml:"tcp_port"`
	UDPPort                 string   `yaml:"udp_port"`
	NodeIP                  string   `yaml:"node_ip"`
	UseExternalIP           bool     `yaml:"use_external_ip"`
	UseICELite              bool     `yaml:"use_ice_lite"`
	EnableLoopbackCandidate bool     `yaml:"enable_loopback_candidate"`
	STUNServers             []string `yaml:"stun_servers"`
	IPs                     ipsYAML  `yaml:"ips"`
}

type ipsYAML struct {
	Includes []string `yaml:"includes"`
}

type roomYAML struct {
	AutoCreate       bool `yaml:"auto_create"`
	EmptyTimeout     int  `yaml:"empty_timeout"`
	DepartureTimeout int  `yaml:"departure_timeout"`
}

type webhookYAML struct {
	APIKey string         `yaml:"api_key"`
	URLs   []string       `yaml:"urls"`
	Filter *webhookFilter `yaml:"filter_params,omitempty"`
}

type redisYAML struct {
	Address  string `yaml:"address"`
	Password string `yaml:"password,omitempty"`
}

type webhookFilter struct {
	IncludeEvents []string `yaml:"include_events"`
}

type loggingYAML struct {
	Level     string `yaml:"level"`
	PionLevel string `yaml:"pion_level"`
}

// YAML renders the livekit-server config for c. Ports must already be chosen.
func (c Config) YAML() ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c = c.withDefaults()
	udp := fmt.Sprint(c.RTCUDPPort)
	if c.RTCUDPPortEnd > 0 {
		udp = fmt.Sprintf("%d-%d", c.RTCUDPPort, c.RTCUDPPortEnd)
	}
	y := serverYAML{
		Port:          c.Port,
		BindAddresses: []string{c.Host},
		Keys:          map[string]string{c.APIKey: c.APISecret},
		RTC: rtcYAML{
			TCPPort: c.RTCTCPPort,
			UDPPort: udp,
			// Loopback only: advertise the bind address as the one host candidate and
			// never ask a STUN server for a public address. With no STUN server set,
			// livekit-server hands every client public default STUN servers, so the one
			// named here is LiveKit's own RTC port on the bind address.
			NodeIP:                  c.Host,
			UseExternalIP:           false,
			EnableLoopbackCandidate: true,
			STUNServers:             []string{net.JoinHostPort(c.Host, fmt.Sprint(c.RTCUDPPort))},
			// Sockets on the bind address only. Otherwise the server listens on every
			// local address, node_ip rewrites each IPv4 one's candidate to the bind
			// address, and which socket owns that one candidate follows a map's order,
			// fixed per process: in four of eleven starts here it was another address's
			// socket, the checks clients sent to the bind address went unanswered, and
			// the connections went over IPv6 after the clients' 200 ms check tick.
			IPs: ipsYAML{Includes: []string{hostCIDR(c.Host)}},
			// ICE lite: the server only answers checks and every client nominates its
			// pair, so no join waits on the server's peer-reflexive timer (FullICE).
			UseICELite: !c.FullICE,
		},
		Room: roomYAML{
			// Off everywhere: a token for an ended call must not bring its room back.
			AutoCreate:       false,
			EmptyTimeout:     int(c.EmptyTimeout / time.Second),
			DepartureTimeout: int(c.DepartureTimeout / time.Second),
		},
		Agents:  agentsYAML{TargetLoad: AgentTargetLoad},
		Logging: loggingYAML{Level: c.LogLevel, PionLevel: "error"},
	}
	if len(c.WebhookURLs) > 0 {
		y.Webhook = &webhookYAML{APIKey: c.APIKey, URLs: c.WebhookURLs}
		if len(c.WebhookEvents) > 0 {
			y.Webhook.Filter = &webhookFilter{IncludeEvents: c.WebhookEvents}
		}
	}
	if c.RedisAddress != "" {
		y.Redis = &redisYAML{Address: c.RedisAddress, Password: c.RedisPassword}
	}
	return yaml.Marshal(y)
}

// hostCIDR is the single-address network of host, an IP address (Validate).
func hostCIDR(host string) string {
	if net.ParseIP(host).To4() == nil {
		return host + "/128"
	}
	return host + "/32"
}
