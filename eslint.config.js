import js from "@eslint/js";
import tseslint from "typescript-eslint";

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
);
