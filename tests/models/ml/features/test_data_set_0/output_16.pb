B
categories2other2one2one2other2other2other2other2seven2other2fünf2other2one2seven2fünf2fünf2other2other2other