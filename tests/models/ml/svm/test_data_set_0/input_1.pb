Bx_rowJOá>ÊCU¾’”B?‹‘¬?
ªM<