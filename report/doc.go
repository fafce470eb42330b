// Package report is the results model of the project's commands and the files it writes. It holds
// the suite's results (a SpecResult per spec, a RuleVerdict per rule of the catalogue, their
// counts and root causes) and the writers: JUnit XML (check's, a suite per area, and
// check-receiver's, one suite of rules), indented JSON, the HTML report, and the file a report
// goes to.
//
// It sits below everything: it imports neither Ginkgo nor Gomega, nor the contract loader (and
// kin-openapi under it), nor any other package of the module, so check-receiver, the receiver's
// packages and the wrong-server tables use it without linking the suite.
package report
