// Package judge holds the judges of the contract that need no description: the one table of the
// interface's id forms (IDKinds), the routes the judges tell apart (APIBase, ControlBase,
// FilesPath, UploadPath), and the one Finding type every judge of observed traffic reports (the
// proxy's checks and the client audit of package audit, used by `mediaspec mock --audit` and
// `mediaspec proxy` alike). Shapes against the REST description are judged by spec.Judge, which
// reads the description; this package reads nothing and imports only the standard library, so the
// mock, the suite, the proxy and report may all use it.
package judge
