package livekitserver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/bridgeline/bridgeline/mediafleet/livekitserver"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver/livekittest"
)

func TestConfigYAML(t *testing.T) {
	cfg := livekitserver.Config{
		APIKey: "APIkey", APISecret: strings.Repeat("s", 32),
		Port: 7880, RTCTCPPort: 7881, RTCUDPPort: 7882,
		WebhookURLs:   []string{"http://127.0.0.1:8080/internal/livekit/webhook"},
		WebhookEvents: []string{"room_finished"},
		EmptyTimeout:  30 * time.Second,
	}
	b, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Port int `yaml:"port"`
		Room struct {
			AutoCreate   *bool `yaml:"auto_create"`
			EmptyTimeout int   `yaml:"empty_timeout"`
		} `yaml:"room"`
		Webhook struct {
			APIKey string   `yaml:"api_key"`
			URLs   []string `yaml:"urls"`
			Filter struct {
				IncludeEvents []string `yaml:"include_events"`
			} `yaml:"filter_params"`
		} `yaml:"webhook"`
		RTC struct {
			UDPPort     string   `yaml:"udp_port"`
			TCPPort     int      `yaml:"tcp_port"`
			STUNServers []string `yaml:"stun_servers"`
			UseICELite  *bool    `yaml:"use_ice_lite"`
			IPs         struct {
				Includes []string `yaml:"includes"`
			} `yaml:"ips"`
		} `yaml:"rtc"`
		BindAddresses []string `yaml:"bind_addresses"`
		Agents        struct {
			TargetLoad *float64 `yaml:"target_load"`
		} `yaml:"agents"`
	}
	if err := yaml.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	// Jobs go to a worker until its slots are full, not until 70% of them are taken.
	if got.Agents.TargetLoad == nil || *got.Agents.TargetLoad != 1 {
		t.Errorf("agents.target_load = %v, want 1", got.Agents.TargetLoad)
	}
	if got.Room.AutoCreate == nil || *got.Room.AutoCreate {
		t.Errorf("room.auto_create = %v, want explicit false", got.Room.AutoCreate)
	}
	if got.Room.EmptyTimeout != 30 {
		t.Errorf("room.empty_timeout = %d, want 30", got.Room.EmptyTimeout)
	}
	if got.Webhook.APIKey != "APIkey" || len(got.Webhook.URLs) != 1 ||
		len(got.Webhook.Filter.IncludeEvents) != 1 || got.Webhook.Filter.IncludeEvents[0] != "room_finished" {
		t.Errorf("webhook = %+v, want api key, one url and the one event", got.Webhook)
	}
	if got.RTC.UDPPort != "7882" || got.RTC.TCPPort != 7881 || got.Port != 7880 {
		t.Errorf("ports = %d/%d/%s, want 7880/7881/7882", got.Port, got.RTC.TCPPort, got.RTC.UDPPort)
	}
	if len(got.BindAddresses) != 1 || got.BindAddresses[0] != "127.0.0.1" {
		t.Errorf("bind_addresses = %v, want [127.0.0.1]", got.BindAddresses)
	}
	// Without a STUN server of its own, livekit-server sends clients public ones.
	if len(got.RTC.STUNServers) != 1 || got.RTC.STUNServers[0] != "127.0.0.1:7882" {
		t.Errorf("rtc.stun_servers = %v, want [127.0.0.1:7882]", got.RTC.STUNServers)
	}
	// Media sockets on the bind address only: the one candidate is its own socket's.
	if len(got.RTC.IPs.Includes) != 1 || got.RTC.IPs.Includes[0] != "127.0.0.1/32" {
		t.Errorf("rtc.ips.includes = %v, want [127.0.0.1/32]", got.RTC.IPs.Includes)
	}
	// A full ICE agent makes joins wait a second on its peer-reflexive timer (FullICE).
	if got.RTC.UseICELite == nil || !*got.RTC.UseICELite {
		t.Errorf("rtc.use_ice_lite = %v, want true", got.RTC.UseICELite)
	}
	cfg.FullICE = true
	if b, err = cfg.YAML(); err != nil {
		t.Fatal(err)
	}
	got.RTC.UseICELite = nil
	if err := yaml.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.RTC.UseICELite == nil || *got.RTC.UseICELite {
		t.Errorf("FullICE: rtc.use_ice_lite = %v, want false", got.RTC.UseICELite)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := livekitserver.Config{APIKey: "k", APISecret: strings.Repeat("s", 32)}
	tests := []struct {
		name string
		edit func(*livekitserver.Config)
	}{
		{"no key", func(c *livekitserver.Config) { c.APIKey = "" }},
		{"short secret", func(c *livekitserver.Config) { c.APISecret = "short" }},
		{"bad range", func(c *livekitserver.Config) { c.RTCUDPPort, c.RTCUDPPortEnd = 50000, 40000 }},
		{"bad webhook", func(c *livekitserver.Config) { c.WebhookURLs = []string{"ftp://x"} }},
		{"host name", func(c *livekitserver.Config) { c.Host = "localhost" }},
	}
	if err := ok.Validate(); err != nil {
		t.Fatalf("Validate(valid) = %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			if err := c.Validate(); err == nil {
				t.Errorf("Validate() = nil, want an error")
			}
		})
	}
}

func TestStartStop(t *testing.T) {
	s := livekittest.Start(t, livekitserver.Config{})
	resp, err := http.Get(s.HTTPURL() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET / = %d, want 200", resp.StatusCode)
	}
	// Starting takes livekit-server well over one clock tick of CPU.
	if cpu := s.CPUTime(); cpu <= 0 || cpu > time.Minute {
		t.Errorf("CPUTime() = %v, want the running process's, above zero", cpu)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop() = %v", err)
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("process still running after Stop")
	}
	if _, err := http.Get(s.HTTPURL() + "/"); err == nil {
		t.Error("server still answers after Stop")
	}
}
