package livekitsip_test

import (
	"context"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/bridgeline/bridgeline/mediafleet/livekitsip"
	"github.com/bridgeline/bridgeline/mediafleet/livekitsip/siptest"
)

func validConfig() livekitsip.Config {
	return livekitsip.Config{
		APIKey: "APIkey", APISecret: strings.Repeat("s", 32), WSURL: "ws://127.0.0.1:7880",
		RedisAddress: "127.0.0.1:6379", RedisPassword: "pw", SIPPort: 5060, RTPPortStart: 10000, RTPPortEnd: 10099,
	}
}

func TestConfigYAML(t *testing.T) {
	b, err := validConfig().YAML()
	if err != nil {
		t.Fatal(err)
	}
	// The keys livekit-sip v1.8.0 reads (pkg/config/config.go).
	var got struct {
		APIKey    string `yaml:"api_key"`
		APISecret string `yaml:"api_secret"`
		WSURL     string `yaml:"ws_url"`
		Redis     struct {
			Address  string `yaml:"address"`
			Password string `yaml:"password"`
		} `yaml:"redis"`
		SIPPort       int     `yaml:"sip_port"`
		RTPPort       string  `yaml:"rtp_port"`
		ListenIP      string  `yaml:"listen_ip"`
		NAT1To1IP     string  `yaml:"nat_1_to_1_ip"`
		UseExternalIP *bool   `yaml:"use_external_ip"`
		HealthPort    *int    `yaml:"health_port"`
		MaxCPU        float64 `yaml:"max_cpu_utilization"`
		Logging       struct {
			Level string `yaml:"level"`
		} `yaml:"logging"`
		LogLevel *string `yaml:"log_level"`
	}
	if err := yaml.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.APIKey != "APIkey" || got.WSURL != "ws://127.0.0.1:7880" || got.Redis.Address != "127.0.0.1:6379" || got.Redis.Password != "pw" {
		t.Errorf("keys, url or redis wrong:\n%s", b)
	}
	if got.SIPPort != 5060 || got.RTPPort != "10000-10099" {
		t.Errorf("sip_port %d, rtp_port %q; want 5060 and 10000-10099", got.SIPPort, got.RTPPort)
	}
	// Loopback to listen on and to advertise: else the SDP names the machine's first
	// non-loopback address.
	if got.ListenIP != "127.0.0.1" || got.NAT1To1IP != "127.0.0.1" || got.UseExternalIP == nil || *got.UseExternalIP {
		t.Errorf("listen_ip %q, nat_1_to_1_ip %q, use_external_ip %v; want loopback twice and false", got.ListenIP, got.NAT1To1IP, got.UseExternalIP)
	}
	if got.HealthPort != nil {
		t.Errorf("health_port = %d, want none (it binds every interface)", *got.HealthPort)
	}
	if got.MaxCPU != 1 {
		t.Errorf("max_cpu_utilization = %v, want 1 (the 0.9 default refuses calls on a busy machine)", got.MaxCPU)
	}
	if got.Logging.Level != "info" || got.LogLevel != nil {
		t.Errorf("logging.level %q, log_level %v; want info under logging only", got.Logging.Level, got.LogLevel)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := validConfig().Validate(); err != nil {
		t.Fatalf("Validate(valid) = %v", err)
	}
	for _, tt := range []struct {
		name string
		edit func(*livekitsip.Config)
	}{
		{"no key", func(c *livekitsip.Config) { c.APIKey = "" }},
		{"http url", func(c *livekitsip.Config) { c.WSURL = "http://127.0.0.1:7880" }},
		{"no redis", func(c *livekitsip.Config) { c.RedisAddress = "" }},
		{"port", func(c *livekitsip.Config) { c.SIPPort = 70000 }},
		{"half range", func(c *livekitsip.Config) { c.RTPPortEnd = 0 }},
		{"empty range", func(c *livekitsip.Config) { c.RTPPortEnd = c.RTPPortStart }},
		{"cpu", func(c *livekitsip.Config) { c.MaxCPUUtilization = 1.5 }},
		{"host name", func(c *livekitsip.Config) { c.Host = "localhost" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			tt.edit(&c)
			if err := c.Validate(); err == nil {
				t.Error("Validate() = nil, want an error")
			}
		})
	}
}

func TestStartStop(t *testing.T) {
	e := siptest.Start(t, siptest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := livekitsip.Options(ctx, e.SIP.SIPAddr()); err != nil {
		t.Fatalf("OPTIONS over UDP: %v", err)
	}
	// SIP over TCP too.
	c, err := net.Dial("tcp", e.SIP.SIPAddr())
	if err != nil {
		t.Fatalf("SIP over TCP: %v", err)
	}
	c.Close()
	// siptest runs it at TestNice, where this process may raise a priority (root).
	if prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, e.SIP.PID()); err != nil {
		t.Errorf("getpriority(livekit-sip): %v", err)
	} else if nice := 20 - prio; os.Geteuid() == 0 && nice != livekitsip.TestNice {
		t.Errorf("livekit-sip runs at niceness %d, want %d", nice, livekitsip.TestNice)
	}
	if cpu, rss := e.SIP.CPUTime(), e.SIP.RSS(); cpu <= 0 || rss < 1<<20 {
		t.Errorf("CPUTime() = %v, RSS() = %d; want the running process's", cpu, rss)
	}
	if err := e.SIP.Stop(ctx); err != nil {
		t.Fatalf("Stop() = %v", err)
	}
	select {
	case <-e.SIP.Done():
	default:
		t.Fatal("livekit-sip still running after Stop")
	}
	if err := livekitsip.Options(ctx, e.SIP.SIPAddr()); err == nil {
		t.Error("livekit-sip still answers after Stop")
	}
}
