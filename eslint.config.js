import js from "@eslint/js";
import tseslint from "typescript-eslint";

// A handler that drops its error: `() => undefined`, `() => {}`, `() => ({})`, `() => []`, `() => null`.
const dropsError = ":matches([body.type='Identifier'][body.name='undefined'], [body.type='BlockStatement'][body.body.length=0], [body.type='ObjectExpression'][body.properties.length=0], [body.type='ArrayExpression'][body.elements.length=0], [body.type='Literal'])";
const swallowed = "drops an error silently: handle it, or pass it to ignoreError(reason) / ignored(reason, error) from src/core/ignored.ts, which says why it is safe and counts it in the `arbor` debug log";
/** Files of src/ still allowed to drop errors silently (none; test/architecture/swallowed-errors.test.ts). */
export const swallowedErrorAllowlist = [];

export default tseslint.config(
  { ignores: ["node_modules/**", "coverage/**", "bench/out/**", ".arbor/**", "dist/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: "readonly", console: "readonly", setTimeout: "readonly", clearTimeout: "readonly", setInterval: "readonly", clearInterval: "readonly", setImmediate: "readonly", queueMicrotask: "readonly", Buffer: "readonly", URL: "readonly", AbortController: "readonly", AbortSignal: "readonly", structuredClone: "readonly", fetch: "readonly", Response: "readonly", Request: "readonly", Headers: "readonly", TextEncoder: "readonly", TextDecoder: "readonly", ReadableStream: "readonly" } },
    rules: {
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_" }],
      "@typescript-eslint/no-empty-object-type": "off",
      "no-control-regex": "off",
    },
  },
  {
    files: ["src/**/*.ts"],
    ignores: swallowedErrorAllowlist,
    rules: {
      "no-restricted-syntax": [
        "error",
        { selector: "CatchClause > BlockStatement.body[body.length=0]", message: `An empty catch block ${swallowed}.` },
        { selector: `CallExpression[callee.property.name='catch'] > ArrowFunctionExpression.arguments${dropsError}`, message: `This .catch handler ${swallowed}.` },
        { selector: `CallExpression[callee.property.name='then'][arguments.length=2] > ArrowFunctionExpression.arguments:nth-child(2)${dropsError}`, message: `This rejection handler ${swallowed}.` },
        { selector: `CallExpression[callee.property.name='on'][arguments.0.value='error'] > ArrowFunctionExpression.arguments${dropsError}`, message: `This error listener ${swallowed}.` },
      ],
    },
  },
);
