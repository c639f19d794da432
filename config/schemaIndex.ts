/** The schema and its flattening, without loading the runtime config reader. */
export { schema } from "./stack";
export { flatten } from "./schema";
