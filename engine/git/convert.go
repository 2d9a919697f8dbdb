package git

// Conversion is what git's clean step does to a file's line endings when it stores it
// (convert.c's crlf_action, seen from the clean side only: every action that writes CRLF to the
// work tree stores LF).
type Conversion int

const (
	// ConvertNone stores the content as it is (binary, `-text`, or no attribute and
	// core.autocrlf false).
	ConvertNone Conversion = iota
	// ConvertText removes each carriage return before a line feed (`text`, `eol=lf`,
	// `eol=crlf`).
	ConvertText
	// ConvertAuto does as ConvertText for a content git's detection takes for text (no lone
	// carriage return, no NUL, few non-printable bytes), unless the index's blob of the path
	// already holds CRLF line endings (`text=auto`, or core.autocrlf true or input with no
	// text attribute).
	ConvertAuto
)

// ConversionAttrs are the attributes CleanConversion decides by, as CheckAttr asks for them.
var ConversionAttrs = []string{"text", "eol", "crlf"}

// CleanConversion answers the conversion git applies to a path whose attributes are attrs (as
// CheckAttr answers them; a missing attribute is unspecified) in a repository whose
// core.autocrlf is autocrlf ("true", "input", anything else false).
func CleanConversion(attrs map[string]string, autocrlf string) Conversion {
	action := textAction(attrs["text"])
	if action == actionUndefined {
		action = textAction(attrs["crlf"]) // the attribute's older name
	}
	if action != actionBinary {
		switch eol := attrs["eol"]; {
		case action == actionAuto && (eol == "lf" || eol == "crlf"):
			return ConvertAuto
		case eol == "lf" || eol == "crlf":
			return ConvertText
		}
	}
	switch action {
	case actionText:
		return ConvertText
	case actionAuto:
		return ConvertAuto
	case actionBinary:
		return ConvertNone
	}
	switch autocrlf {
	case "true", "input":
		return ConvertAuto
	}
	return ConvertNone
}

type textActionKind int

const (
	actionUndefined textActionKind = iota
	actionBinary
	actionText
	actionAuto
)

// textAction reads the text (or crlf) attribute's value as git does.
func textAction(v string) textActionKind {
	switch v {
	case "set":
		return actionText
	case "unset":
		return actionBinary
	case "input":
		return actionText
	case "auto":
		return actionAuto
	}
	return actionUndefined
}
