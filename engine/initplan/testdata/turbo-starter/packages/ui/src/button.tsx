export const Button = ({ children }: { children: React.ReactNode }) => <button>{children}</button>
