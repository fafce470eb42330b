package judge

// The routes the judges tell apart. APIBase is the text's versioned root; the others are the
// reference's own choices (docs/mock.md), shared by the mock that serves them and the proxy and
// audit that watch them.
const (
	// APIBase is the versioned API root.
	APIBase = "/api/v1"
	// ControlBase is the test-control API's root (spec/control.yaml), whose writes change state a
	// client does not send.
	ControlBase = "/_control/v1"
	// FilesPath is where the reference serves its signed download links.
	FilesPath = "/files/"
	// UploadPath is where the reference takes its signed upload PUTs.
	UploadPath = "/upload-slots/"
)
