package platformsim

// Patterns are the net/http patterns of the sim's HTTP API and its browser caller page,
// all served by the Simulator's Handler. The local stack mounts them as public routes (no
// API key) outside /v1 (httpapi.Passthrough); the sim writes its own responses: its
// JSON, and the page's HTML and scripts. A plain list, so the sim depends on no HTTP
// layer of the control plane.
var Patterns = []string{
	"POST /sim/calls", "GET /sim/calls",
	"GET /sim/calls/{id}", "POST /sim/calls/{id}/hangup",
	"POST /sim/calls/{id}/joined", "POST /sim/calls/{id}/say",
	"GET /sim/{$}", "GET /sim/page/{file}",
}
