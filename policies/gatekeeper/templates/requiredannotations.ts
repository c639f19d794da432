import type { TemplateRule } from "../types";
import { requiredKeyViolations, type RequiredKey } from "../engine/required-keys";

export interface Params {
    message?: string;
    annotations?: RequiredKey[];
}

export const rule: TemplateRule<Params> = {
    kind: "K8sRequiredAnnotations",
    template: "requiredannotations",
    category: "general",
    description: "Requires resources to contain specified annotations, with values matching provided regular expressions.",
    parameterSchema: {
        "type": "object",
        "properties": {
            "message": {
                "type": "string"
            },
            "annotations": {
                "type": "array",
                "description": "A list of annotations and values the object must specify.",
                "items": {
                    "type": "object",
                    "properties": {
                        "key": {
                            "type": "string",
                            "description": "The required annotation."
                        },
                        "allowedRegex": {
                            "type": "string",
                            "description": "If specified, a regular expression the annotation's value must match. The value must contain at least one match for the regular expression."
                        }
                    }
                }
            }
        }
    },
    validate({ review, parameters }) {
        // The library's Rego does not read parameters.message for annotations (only requiredlabels does).
        return requiredKeyViolations(review.object.metadata?.annotations, parameters.annotations, undefined, {
            missing: "you must provide annotation(s)",
            noun: "Annotation",
            detailsKey: "missing_annotations",
        });
    },
};
