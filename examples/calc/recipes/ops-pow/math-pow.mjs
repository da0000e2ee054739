export const pow = (a, b) => Math.pow(a, b)
