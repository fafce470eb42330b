package spec

import (
	"bytes"
	"encoding/json"
	"errors"
)

// jsonUnmarshalNumber decodes JSON keeping numbers as float64 (what schema validation expects) and
// refusing trailing data.
func jsonUnmarshalNumber(data []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(dst); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}
