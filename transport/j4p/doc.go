// Package j4p is tadpole's management endpoint: the j4p agent protocol 0.30
// (jmx4perl) and its successor Jolokia, as Jolokia 2.x serves it, over
// HTTP and JSON. It imports the standard library only. Any host plugs its
// managed objects in through the MBeanServer interface (Registry is a
// ready one), and Handler serves them.
//
// # Protocol versions
//
//	j4p 0.30        jmx4perl 0.30–0.75: GET paths with "/-/" escaping, POST
//	                single and bulk, plain version string, 404 on an empty
//	                search, HTTP status = JSON status, text/plain.
//	Jolokia 6.0     (1.0.0) GET escaping "!" instead of "/-/".
//	Jolokia 6.1     errors carry "request".
//	Jolokia 7.0     maxDepth 1-based, serializeException, canonicalNaming,
//	                includeStackTrace.
//	Jolokia 7.2     path wildcard "*" (the protocol version this package
//	                reports).
//	Jolokia 2.x     (protocol 7.3–8.2) JMX-level errors in HTTP 200 with
//	                application/json, HTTP 400 text for unparsable requests,
//	                includeRequest, canonicalNaming false and no stack
//	                traces by default.
//
// Dialect2 (the default) speaks Jolokia 2.x's forms; Dialect030 the j4p 0.30
// ones. The two GET escapings cannot be told apart from a path alone ("-"
// is a valid part), so the dialect is an explicit setting, as the Jolokia
// agents themselves have no "/-/" support.
//
// # Requests
//
// GET <base>/<type>/<arg>/<arg>…?<params>, where type is read, write,
// exec, search, list or version (any case), or GET <base>?p=/<type>/… with
// the whole path in one query parameter. With Dialect2 each part is
// "!"-escaped: "!/" is a literal "/", "!!" is "!", "!x" is x. With
// Dialect030 "/-/" glues two parts with one "/", "/--/" with two, and a
// part that ends in slashes is written "…/-+/". GET <base> alone is
// version.
//
//	read    <mbean>[/<attribute>[/<inner path>…]]   attribute may be a
//	                                                comma list (\, escapes);
//	                                                "*" or none: all
//	write   <mbean>/<attribute>/<value>[/<inner path>…]   "[null]" is null
//	exec    <mbean>/<operation>[/<arg>…]            operation may carry a
//	                                                signature "op(int,long)"
//	search  <pattern>
//	list    [<domain>[/<key list>[/attr|op|…]]]
//	version
//
// POST <base>: a JSON object (one request) or array (bulk, answered with an
// array in the same order) with the keys type, mbean, attribute (string or
// array), value, operation, arguments, path and config (processing
// parameters, overriding those of the query string).
//
// Processing parameters: maxDepth (1-based, 0 = the agent's cap),
// maxCollectionSize, maxObjects, ignoreErrors, serializeException,
// canonicalNaming, includeStackTrace, includeRequest, mimeType. A request
// can only lower the agent's caps.
//
// # Responses
//
// Success: {"request":{…},"value":…,"timestamp":<epoch s>,"status":200}.
// Error: {"request":{…},"error_type":"<Java exception class>","error":"…",
// "status":4xx|5xx} plus "stacktrace" and "error_value" only when the
// agent allows error details and the request asks. Statuses: 404 for an
// unknown MBean, attribute, operation or path, 400 for an illegal argument,
// 403 for a policy denial, 500 otherwise.
//
// With Dialect2 every JMX-level result, error or not, comes in HTTP 200 as
// application/json (each item of a bulk separately); a request that cannot
// be parsed (bad JSON, too deep, a bad processing parameter, an
// unsupported HTTP method) gets HTTP 400 with a text/plain body, a body
// over the limit 413, a missing or wrong Basic credential 401, a refused
// client host or origin 403. With Dialect030 the HTTP status of a single
// request is its JSON status and the body is text/plain.
//
// Values are converted to JSON as Jolokia does: maps and structs become
// objects, slices and arrays lists, ObjectName {"objectName":"…"}; past
// maxDepth a value becomes "[Depth limit …]", past maxObjects
// "[Object limit exceeded]", and maxCollectionSize truncates lists and maps.
//
// # Security
//
// See Config: loopback clients only unless told otherwise, write and exec
// refused unless enabled or allowed by a Policy (Jolokia's
// jolokia-access.xml format), optional Basic authentication, bounded body,
// JSON nesting, bulk length and response size, no CORS headers unless an
// origin allow-list is set, no stack traces, no proxy mode, no JSONP.
package j4p
