package framework

import "reflect"

// FlagEnv maps each flag RegisterFlags defines to the environment variable that sets the same
// Config field ("config" to MEDIASPEC_CONFIG), so a command's help can name both.
func FlagEnv() map[string]string {
	out := map[string]string{"config": "MEDIASPEC_CONFIG"}
	t := reflect.TypeOf(Config{})
	for i := 0; i < t.NumField(); i++ {
		field := t.Field(i)
		if name, ok := flagNames[field.Name]; ok {
			if env := field.Tag.Get("env"); env != "" {
				out[name] = env
			}
		}
	}
	return out
}
