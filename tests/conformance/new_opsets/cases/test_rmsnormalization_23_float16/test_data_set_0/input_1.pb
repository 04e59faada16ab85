
BscaleJÎ1{8Ë½o>æ@æ"r#Þ¹