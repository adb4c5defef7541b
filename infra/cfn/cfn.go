// Package cfn reads CloudFormation and AWS SAM templates written in YAML, with the short
// forms of intrinsic functions (!Ref, !GetAtt, !Sub, ...) turned into their long JSON
// forms ({"Ref": ...}, {"Fn::GetAtt": [...]}), so tests can check what a template
// declares without a CloudFormation engine.
package cfn

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Template is a parsed template.
type Template struct {
	Transform  any                       `json:"Transform"`
	Parameters map[string]map[string]any `json:"Parameters"`
	Mappings   map[string]map[string]any `json:"Mappings"`
	Conditions map[string]any            `json:"Conditions"`
	Rules      map[string]map[string]any `json:"Rules"`
	Globals    map[string]any            `json:"Globals"`
	Resources  map[string]Resource       `json:"Resources"`
	Outputs    map[string]map[string]any `json:"Outputs"`
}

// Resource is one entry of Resources.
type Resource struct {
	Type       string         `json:"Type"`
	Properties map[string]any `json:"Properties"`
	Metadata   map[string]any `json:"Metadata"`
	DependsOn  any            `json:"DependsOn"`
	Condition  string         `json:"Condition"`
}

// Load reads and parses a template file.
func Load(path string) (*Template, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Parse parses a template.
func Parse(b []byte) (*Template, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("empty template")
	}
	v, err := convert(doc.Content[0])
	if err != nil {
		return nil, err
	}
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var t Template
	if err := json.Unmarshal(j, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// ResourcesOfType returns the logical ids of resources of type typ.
func (t *Template) ResourcesOfType(typ string) map[string]Resource {
	out := map[string]Resource{}
	for id, r := range t.Resources {
		if r.Type == typ {
			out[id] = r
		}
	}
	return out
}

// intrinsics maps a short-form tag to its long-form key.
var intrinsics = map[string]string{
	"!Ref": "Ref", "!Condition": "Condition",
	"!GetAtt": "Fn::GetAtt", "!Sub": "Fn::Sub", "!Join": "Fn::Join", "!Select": "Fn::Select",
	"!Split": "Fn::Split", "!If": "Fn::If", "!Equals": "Fn::Equals", "!Not": "Fn::Not",
	"!And": "Fn::And", "!Or": "Fn::Or", "!FindInMap": "Fn::FindInMap", "!Base64": "Fn::Base64",
	"!Cidr": "Fn::Cidr", "!GetAZs": "Fn::GetAZs", "!ImportValue": "Fn::ImportValue",
	"!Transform": "Fn::Transform", "!Length": "Fn::Length", "!ToJsonString": "Fn::ToJsonString",
}

func convert(n *yaml.Node) (any, error) {
	if n.Kind == yaml.AliasNode {
		return convert(n.Alias)
	}
	var v any
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			val, err := convert(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[n.Content[i].Value] = val
		}
		v = m
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			val, err := convert(c)
			if err != nil {
				return nil, err
			}
			s = append(s, val)
		}
		v = s
	case yaml.ScalarNode:
		v = scalar(n)
	default:
		return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
	}
	if key, ok := intrinsics[n.Tag]; ok {
		if key == "Fn::GetAtt" {
			if s, ok := v.(string); ok {
				res, attr, _ := strings.Cut(s, ".")
				v = []any{res, attr}
			}
		}
		return map[string]any{key: v}, nil
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		return nil, fmt.Errorf("line %d: unknown tag %s", n.Line, n.Tag)
	}
	return v, nil
}

// scalar keeps CloudFormation's view: untagged scalars are strings unless YAML says
// they are numbers or booleans.
func scalar(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!int":
		if i, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
			return i
		}
	case "!!float":
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
			return f
		}
	case "!!bool":
		if b, err := strconv.ParseBool(n.Value); err == nil {
			return b
		}
	case "!!null":
		return nil
	}
	return n.Value
}
