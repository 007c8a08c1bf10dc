// chrome-devtools-mcp 1.11.0 declares Node ^20.19 but calls two things Node 20's V8 lacks:
// Set.prototype.intersection (get_css_styles) and Promise.withResolvers (the heap tools).
// The tests run the release on the machine's Node 20, so these are filled in before it loads;
// without them those tools fail on Node 20 for every user, not only here.
'use strict';
if (typeof Promise.withResolvers !== 'function') {
  Promise.withResolvers = function withResolvers() {
    let resolve;
    let reject;
    const promise = new this((yes, no) => {
      resolve = yes;
      reject = no;
    });
    return { promise, resolve, reject };
  };
}
const setMethods = {
  intersection(other) {
    const result = new Set();
    for (const value of this) if (other.has(value)) result.add(value);
    return result;
  },
  union(other) {
    const result = new Set(this);
    for (const value of other.keys()) result.add(value);
    return result;
  },
  difference(other) {
    const result = new Set();
    for (const value of this) if (!other.has(value)) result.add(value);
    return result;
  },
  isSubsetOf(other) {
    for (const value of this) if (!other.has(value)) return false;
    return true;
  },
};
for (const [name, method] of Object.entries(setMethods)) {
  if (typeof Set.prototype[name] !== 'function') {
    Object.defineProperty(Set.prototype, name, { value: method, writable: true, configurable: true });
  }
}
