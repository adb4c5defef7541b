package platformsim

import "github.com/bridgeline/bridgeline/shared/platform/sim"

// Patterns are the net/http patterns the Sim's Handler serves (sim.Patterns: the control
// plane's route table lists them without linking the sim).
var Patterns = sim.Patterns
