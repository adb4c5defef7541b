// Package livekitsip runs LiveKit's SIP bridge (livekit-sip, github.com/livekit/sip) for
// the local stack and for tests: it writes the bridge's YAML config from a typed Config,
// starts the binary that scripts/build-livekit-sip.sh builds, waits until it answers SIP,
// and stops it with a drain. livekit-sip talks to livekit-server through the Redis they
// share (mediafleet/redisserver): trunks and dispatch rules live there, and calls are
// handed over on its psrpc bus.
//
// Settings learnt the hard way (v1.8.0): the log level is logging.level; with the default
// max_cpu_utilization of 0.9 a busy 2-core machine makes it refuse calls ("cpu
// exhausted"), so the local stack sets 1.0; and it advertises the first non-loopback IPv4
// in its SDP and Contact unless nat_1_to_1_ip names an address, so the local stack sets
// it to the loopback address it listens on (a phone on the same machine then sends its
// RTP to 127.0.0.1, which works with no network at all).
package livekitsip

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"gopkg.in/yaml.v3"
)

// Config is what a local livekit-sip needs.
type Config struct {
	// Binary is the livekit-sip executable (the local stack's LIVEKIT_SIP_BIN). Empty:
	// the output of scripts/build-livekit-sip.sh.
	Binary string
	// Dir holds the generated config and the log. Empty: a temporary directory removed
	// by Stop.
	Dir string

	// APIKey and APISecret are livekit-server's; WSURL is where the bridge joins rooms
	// (ws://host:port).
	APIKey    string
	APISecret string
	WSURL     string

	// RedisAddress (host:port) and RedisPassword: the Redis livekit-server uses.
	RedisAddress  string
	RedisPassword string

	// Host is the address SIP listens on and the one the bridge advertises in SDP and
	// Contact; default 127.0.0.1. RTP listens on every interface whatever it says
	// (v1.8.0 binds its media sockets to 0.0.0.0).
	Host string
	// SIPPort is the UDP and TCP port for SIP; zero picks one free for both.
	SIPPort int
	// RTPPortStart-RTPPortEnd is the range of UDP ports for calls' media (one even port a
	// call); zero picks a free block of DefaultRTPPorts ports.
	RTPPortStart int
	RTPPortEnd   int

	// MaxCPUUtilization is the share of the machine's CPU above which the bridge refuses
	// new calls (0-1]; default 1.0 (never: the local stack shares its cores).
	MaxCPUUtilization float64
	// HealthPort, when set, serves GET / (200 healthy, 503 not) on every interface:
	// livekit-sip has no bind setting for it, so the local stack leaves it off.
	HealthPort int
	LogLevel   string // debug | info | warn | error; default info
	// Nice, when not zero, is the niceness the bridge runs at (through nice(1)). Tests
	// give it TestNice: they load a 2-core machine far beyond what a deployment lets its
	// SIP hosts carry, and a bridge descheduled right after sending a REFER loses the
	// phone's answer on this machine (see platform/sip's Adapter.Transfer): 5 transfers
	// in 50 at load 20-35 at the callers' niceness, none in 30 at -10. Raising a
	// priority needs root or CAP_SYS_NICE: without, nice says so in the log and the
	// bridge runs at the caller's niceness.
	Nice int
}

// TestNice is the niceness tests run the bridge at: ahead of the test processes and
// compilers beside it (0), as a SIP host runs it alone.
const TestNice = -10

// DefaultRTPPorts is the size of the RTP range picked when none is given: 50 calls at
// once, each on one even port.
const DefaultRTPPorts = 100

// Validate reports the first missing or invalid setting.
func (c Config) Validate() error {
	switch {
	case c.APIKey == "" || c.APISecret == "":
		return errors.New("livekit-sip: api key and secret are required")
	case !strings.HasPrefix(c.WSURL, "ws://") && !strings.HasPrefix(c.WSURL, "wss://"):
		return fmt.Errorf("livekit-sip: livekit url %q is not ws(s)", c.WSURL)
	case c.RedisAddress == "":
		return errors.New("livekit-sip: a redis address is required (livekit-server must use the same Redis)")
	case c.SIPPort < 0 || c.SIPPort > 65535:
		return fmt.Errorf("livekit-sip: sip port %d out of range", c.SIPPort)
	case c.RTPPortStart < 0 || c.RTPPortEnd > 65535 || (c.RTPPortStart == 0) != (c.RTPPortEnd == 0):
		return fmt.Errorf("livekit-sip: rtp ports %d-%d: give both ends, or neither", c.RTPPortStart, c.RTPPortEnd)
	case c.RTPPortEnd != 0 && c.RTPPortEnd-c.RTPPortStart < 1:
		return fmt.Errorf("livekit-sip: rtp port range %d-%d holds no even port pair", c.RTPPortStart, c.RTPPortEnd)
	case c.MaxCPUUtilization < 0 || c.MaxCPUUtilization > 1:
		return fmt.Errorf("livekit-sip: max cpu utilization %v is outside (0, 1]", c.MaxCPUUtilization)
	}
	if c.Host != "" {
		if _, err := netip.ParseAddr(c.Host); err != nil {
			return fmt.Errorf("livekit-sip: host %q is not an IP address", c.Host)
		}
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Host == "" {
		c.Host = "127.0.0.1"
	}
	if c.MaxCPUUtilization == 0 {
		c.MaxCPUUtilization = 1
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	return c
}

// sipYAML mirrors the parts of livekit-sip's config (pkg/config, v1.8.0) that we set.
type sipYAML struct {
	APIKey            string      `yaml:"api_key"`
	APISecret         string      `yaml:"api_secret"`
	WSURL             string      `yaml:"ws_url"`
	Redis             redisYAML   `yaml:"redis"`
	SIPPort           int         `yaml:"sip_port"`
	RTPPort           string      `yaml:"rtp_port"`
	ListenIP          string      `yaml:"listen_ip"`
	NAT1To1IP         string      `yaml:"nat_1_to_1_ip"`
	UseExternalIP     bool        `yaml:"use_external_ip"`
	HealthPort        int         `yaml:"health_port,omitempty"`
	MaxCPUUtilization float64     `yaml:"max_cpu_utilization"`
	Logging           loggingYAML `yaml:"logging"`
}

type redisYAML struct {
	Address  string `yaml:"address"`
	Password string `yaml:"password,omitempty"`
}

type loggingYAML struct {
	Level string `yaml:"level"`
}

// YAML renders the livekit-sip config for c. Ports must already be chosen.
func (c Config) YAML() ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.SIPPort == 0 || c.RTPPortStart == 0 {
		return nil, errors.New("livekit-sip: ports are not chosen yet")
	}
	c = c.withDefaults()
	y := sipYAML{
		APIKey: c.APIKey, APISecret: c.APISecret, WSURL: c.WSURL,
		Redis:   redisYAML{Address: c.RedisAddress, Password: c.RedisPassword},
		SIPPort: c.SIPPort, RTPPort: fmt.Sprintf("%d-%d", c.RTPPortStart, c.RTPPortEnd),
		// Listen on Host and advertise Host: without nat_1_to_1_ip the bridge would put
		// the machine's first non-loopback address in its SDP and Contact.
		ListenIP: c.Host, NAT1To1IP: c.Host, UseExternalIP: false,
		HealthPort: c.HealthPort, MaxCPUUtilization: c.MaxCPUUtilization,
		Logging: loggingYAML{Level: c.LogLevel},
	}
	return yaml.Marshal(y)
}
