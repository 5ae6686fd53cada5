"""Modal dialogs any screen may open and wait on for an answer: yes/no (confirm), a new case id
(rename), the trash. They import no screen; screens import them."""
