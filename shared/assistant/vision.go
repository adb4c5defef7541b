package assistant

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// ValidVision checks a vision mode given on field: off, camera, screen or
// camera_and_screen.
func ValidVision(field, mode string) error {
	if !slices.Contains(persona.VisionModes, mode) {
		return apierr.Invalid(field, field+" must be "+strings.Join(persona.VisionModes[:len(persona.VisionModes)-1], ", ")+
			" or "+persona.VisionModes[len(persona.VisionModes)-1])
	}
	return nil
}

// visionModel checks, at publish, that a draft with vision names a model that accepts
// images: one of the deployment's LLM_VISION_MODELS. An empty model is the fleet's
// default (LLM_MODEL), which the control plane cannot vouch for, so vision needs a
// model named.
func visionModel(vision, model string, visionModels []string) error {
	if persona.VisionOrOff(vision) == persona.VisionOff || slices.Contains(visionModels, model) {
		return nil
	}
	var why string
	switch {
	case len(visionModels) == 0:
		why = "this deployment names no model that accepts images (LLM_VISION_MODELS is empty), so set vision to off"
	case model == "":
		why = fmt.Sprintf("the draft names no model; name one that accepts images (%s)", strings.Join(visionModels, ", "))
	default:
		why = fmt.Sprintf("model %q does not accept images; name one that does (%s)", model, strings.Join(visionModels, ", "))
	}
	return apierr.Param(apierr.CodeModelLacksVision, "model", "vision "+vision+" shows the model the caller's video, but "+why+"; see GET /v1/models")
}
